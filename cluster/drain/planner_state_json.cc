#include "cluster/drain/planner_state_json.h"

#include <utility>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/drain/snapshot_json.h"
#include "cluster/drain/snapshot_writer.h"
#include "cluster/objects/json_io.h"
#include "cluster/objects/meta_time.h"
#include "common/json_string.h"

namespace qrm::cluster::drain {
namespace {

using json::Field;

Status OnlyKeys(const Field& object, std::initializer_list<std::string_view> keys) {
  return json::ForEachMember(object, [&](std::string_view key, const Field& f) -> Status {
    for (std::string_view k : keys)
      if (k == key) return Status::Ok();
    return InvalidArgumentError(fmt::format("{}: unknown field", f.path));
  });
}

Status ReadHints(const Field& hints, PlannerState* state) {
  return json::ForEachMember(hints, [&](std::string_view source, const Field& pods) -> Status {
    auto& out = state->destination_hints[std::string(source)];
    return json::ForEachMember(pods, [&](std::string_view uid, const Field& dest) -> Status {
      QRM_ASSIGN_OR_RETURN(out[std::string(uid)], json::String(dest));
      return Status::Ok();
    });
  });
}

Status ReadEviction(const Field& item, PlannerState* state) {
  QRM_RETURN_IF_ERROR(OnlyKeys(item, {"evictedAt", "pod"}));
  RecentEviction eviction;
  QRM_ASSIGN_OR_RETURN(std::optional<Field> at, json::Member(item, "evictedAt"));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> pod, json::Member(item, "pod"));
  if (!at || !pod) {
    return InvalidArgumentError(fmt::format("{}: needs evictedAt and pod", item.path));
  }
  QRM_ASSIGN_OR_RETURN(eviction.evicted_at, json::Time(*at));
  ClusterSnapshot one;
  QRM_RETURN_IF_ERROR(DecodeDocument({pod->path, JsonText(*pod->value)}, {}, &one));
  if (one.pods.size() != 1) return InvalidArgumentError(pod->path + ": not a Pod");
  eviction.pod = std::move(one.pods[0]);
  state->recent_evictions.push_back(std::move(eviction));
  return Status::Ok();
}

Status ReadState(const Field& root, PlannerState* state) {
  QRM_RETURN_IF_ERROR(OnlyKeys(root, {"destinationHints", "deletedNodes", "recentEvictions"}));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> hints, json::Member(root, "destinationHints"));
  if (hints) QRM_RETURN_IF_ERROR(ReadHints(*hints, state));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> deleted, json::Member(root, "deletedNodes"));
  if (deleted) {
    QRM_RETURN_IF_ERROR(json::ForEachItem(*deleted, [&](const Field& f) -> Status {
      QRM_ASSIGN_OR_RETURN(std::string node, json::String(f));
      state->deleted_nodes.insert(std::move(node));
      return Status::Ok();
    }));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> evictions, json::Member(root, "recentEvictions"));
  if (!evictions) return Status::Ok();
  return json::ForEachItem(*evictions, [&](const Field& f) { return ReadEviction(f, state); });
}

}  // namespace

std::string EncodePlannerState(const PlannerState& state) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.StartObject();
  w.Key("destinationHints");
  w.StartObject();
  for (const auto& [source, pods] : state.destination_hints) {
    json::WriteKey(w, source);
    w.StartObject();
    for (const auto& [uid, dest] : pods) {
      json::WriteKey(w, uid);
      json::WriteStringValue(w, dest);
    }
    w.EndObject();
  }
  w.EndObject();
  w.Key("deletedNodes");
  w.StartArray();
  for (const std::string& node : state.deleted_nodes) json::WriteStringValue(w, node);
  w.EndArray();
  w.Key("recentEvictions");
  w.StartArray();
  for (const RecentEviction& e : state.recent_evictions) {
    w.StartObject();
    w.Key("evictedAt");
    json::WriteStringValue(w, FormatTime(e.evicted_at));
    w.Key("pod");
    const std::string pod = WritePodJson(e.pod);
    w.RawValue(pod.data(), pod.size(), rapidjson::kObjectType);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

StatusOr<PlannerState> DecodePlannerState(std::string_view text, std::string_view name) {
  QRM_ASSIGN_OR_RETURN(rapidjson::Document doc, json::Parse(text, name));
  PlannerState state;
  Status s = ReadState(Field{&doc, ""}, &state);
  if (!s.ok()) return s.WithContext(name);
  return state;
}

}  // namespace qrm::cluster::drain
