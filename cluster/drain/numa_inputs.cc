#include "cluster/drain/numa_inputs.h"

#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/objects/json_io.h"
#include "cluster/objects/node_resource_topology.h"

namespace qrm::cluster::drain {
namespace {

constexpr std::string_view kNrtKind = "NodeResourceTopology";

std::string Serialize(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

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
  void Error(std::string message) {
    if (errors_.size() < kMaxReportedErrors) errors_.push_back(std::move(message));
    ++error_count_;
  }

  std::map<std::string, NumaNodeState> states_;
  std::map<std::string, std::string> seen_at_;  // node -> where its object was
  std::vector<std::string> errors_;
  size_t error_count_ = 0;
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
  StatusOr<NodeResourceTopology> nrt = DecodeNodeResourceTopology(Serialize(item));
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
  if (errors_.empty()) return std::move(states_);
  std::string message = fmt::format("{} error(s) in the NUMA state input", error_count_);
  for (const std::string& e : errors_) message += "\n  " + e;
  if (error_count_ > errors_.size()) {
    message += fmt::format("\n  ... and {} more", error_count_ - errors_.size());
  }
  return InvalidArgumentError(message);
}

}  // namespace

StatusOr<std::map<std::string, NumaNodeState>> DecodeNumaStates(
    const std::vector<SnapshotDocument>& documents) {
  NumaDecoder decoder;
  for (const SnapshotDocument& document : documents) decoder.Document(document);
  return std::move(decoder).Result();
}

}  // namespace qrm::cluster::drain
