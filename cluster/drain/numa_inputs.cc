#include "cluster/drain/numa_inputs.h"

#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "cluster/drain/error_list.h"
#include "cluster/objects/json_io.h"
#include "cluster/objects/node_resource_topology.h"
#include "common/json_string.h"

namespace qrm::cluster::drain {
namespace {

constexpr std::string_view kNrtKind = "NodeResourceTopology";

std::string KindOf(const rapidjson::Value& object) {
  auto kind = object.FindMember("kind");
  if (kind == object.MemberEnd() || !kind->value.IsString()) return "";
  return kind->value.GetString();
}

// The kinds snapshot_json.h reads (or reads past): inputs may mix them with
// NodeResourceTopologies.
bool SnapshotKind(std::string_view kind) {
  for (std::string_view k :
       {"Node", "Pod", "PodDisruptionBudget", "NodeList", "PodList", "PodDisruptionBudgetList"}) {
    if (kind == k) return true;
  }
  return false;
}

class NumaDecoder {
 public:
  void Document(const SnapshotDocument& document);
  StatusOr<std::map<std::string, NumaNodeState>> Result() &&;

 private:
  void Item(const std::string& where, const rapidjson::Value& item);
  void Error(std::string message) { errors_.Add(InvalidArgumentError(std::move(message))); }

  std::map<std::string, NumaNodeState> states_;
  std::map<std::string, std::string> seen_at_;  // node -> where its object was
  ErrorList errors_;
};

void NumaDecoder::Document(const SnapshotDocument& document) {
  StatusOr<rapidjson::Document> parsed = json::Parse(document.json, document.name);
  if (!parsed.ok()) return Error(parsed.status().message());
  const rapidjson::Value& root = *parsed;
  if (!root.IsObject()) return Error(fmt::format("{}: not a JSON object", document.name));
  const std::string kind = KindOf(root);
  if (kind == kNrtKind) return Item(document.name, root);
  if (kind != "NodeResourceTopologyList" && kind != "List") {
    if (SnapshotKind(kind)) return;  // the snapshot decoder's documents
    return Error(
        fmt::format("{}: kind: \"{}\" is not a NodeResourceTopologyList, List or "
                    "NodeResourceTopology",
                    document.name, kind));
  }
  auto items = root.FindMember("items");
  if (items == root.MemberEnd() || items->value.IsNull()) return;
  if (!items->value.IsArray()) return Error(fmt::format("{}: items: not an array", document.name));
  for (rapidjson::SizeType i = 0; i < items->value.Size(); ++i) {
    const rapidjson::Value& item = items->value[i];
    const std::string where = fmt::format("{}: items[{}]", document.name, i);
    if (!item.IsObject()) {
      Error(where + ": not a JSON object");
    } else if (kind == "List" && KindOf(item) != kNrtKind) {
      continue;  // a mixed List: the snapshot decoder reads the other kinds
    } else {
      Item(where, item);
    }
  }
}

void NumaDecoder::Item(const std::string& where, const rapidjson::Value& item) {
  StatusOr<NodeResourceTopology> nrt = DecodeNodeResourceTopology(JsonText(item));
  if (!nrt.ok()) return Error(fmt::format("{}: {}", where, nrt.status().message()));
  StatusOr<NumaNodeState> state = NumaNodeStateFromNrt(*nrt);
  if (!state.ok()) return Error(fmt::format("{}: {}", where, state.status().message()));
  const std::string node = state->node;
  auto [seen, added] = seen_at_.try_emplace(node, where);
  if (!added) {
    return Error(fmt::format("{}: a second NodeResourceTopology of node {} (the first is {})",
                             where, node, seen->second));
  }
  states_.emplace(node, *std::move(state));
}

StatusOr<std::map<std::string, NumaNodeState>> NumaDecoder::Result() && {
  QRM_RETURN_IF_ERROR(errors_.Result());
  return std::move(states_);
}

}  // namespace

StatusOr<std::map<std::string, NumaNodeState>> DecodeNumaStates(
    const std::vector<SnapshotDocument>& documents) {
  NumaDecoder decoder;
  for (const SnapshotDocument& document : documents) decoder.Document(document);
  return std::move(decoder).Result();
}

}  // namespace qrm::cluster::drain
