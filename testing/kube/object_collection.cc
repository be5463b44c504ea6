#include "testing/kube/object_collection.h"

#include <chrono>
#include <ctime>
#include <string_view>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "testing/kube/collection_state.h"
#include "testing/kube/node_status_store.h"

namespace qrm::testing {
namespace {

using collection::Emit;
using collection::Serialize;
using State = ObjectCollection::State;
using rapidjson::Document;
using rapidjson::Value;

std::string StringAt(const Value& object, const char* a, const char* b) {
  if (!object.IsObject() || !object.HasMember(a) || !object[a].IsObject()) return "";
  const Value& inner = object[a];
  if (!inner.HasMember(b) || !inner[b].IsString()) return "";
  return inner[b].GetString();
}

void SetString(Document& doc, Value& object, const char* key, const std::string& value) {
  Value v(value.c_str(), doc.GetAllocator());
  if (object.HasMember(key)) {
    object[key] = v;
  } else {
    object.AddMember(Value(key, doc.GetAllocator()), v, doc.GetAllocator());
  }
}

Value& ObjectMember(Document& doc, Value& object, const char* key) {
  if (!object.HasMember(key) || !object[key].IsObject()) {
    if (object.HasMember(key)) object.RemoveMember(key);
    object.AddMember(Value(key, doc.GetAllocator()), Value(rapidjson::kObjectType),
                     doc.GetAllocator());
  }
  return object[key];
}

std::string NowRfc3339() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

// metadata.resourceVersion <- a new version; on create also uid and creationTimestamp.
std::string Stamp(State& s, Document& doc, bool create) QRM_REQUIRES(s.mu) {
  Value& meta = ObjectMember(doc, doc, "metadata");
  SetString(doc, meta, "resourceVersion", std::to_string(++s.version));
  if (create) {
    SetString(doc, meta, "uid", fmt::format("uid-{}", s.version));
    SetString(doc, meta, "creationTimestamp", NowRfc3339());
  }
  return Serialize(doc);
}

// Stores the stamped object and sends its event.
const std::string& Store(State& s, const std::string& key, Document& doc, bool create)
    QRM_REQUIRES(s.mu) {
  std::string& stored = s.objects[key] = Stamp(s, doc, create);
  Emit(s, create ? "ADDED" : "MODIFIED", key, stored);
  return stored;
}

std::optional<ApiResponse> ScriptedFailure(State& s) QRM_REQUIRES(s.mu) {
  if (s.fail_times == 0) return std::nullopt;
  --s.fail_times;
  if (s.fail_code == 409) ++s.conflicts;
  return StatusAnswer(s.fail_code, s.fail_code == 409 ? "Conflict" : "InternalError",
                      fmt::format("scripted failure of the test server ({})", s.fail_code));
}

std::string KindOf(const Document& doc, const char* member) {
  return doc.HasMember(member) && doc[member].IsString() ? doc[member].GetString() : "";
}

// The body as an object of `kind`, or the 400 answer.
std::optional<ApiResponse> ParseBody(const ApiRequest& r, const std::string& kind,
                                     const std::string& api_version, Document& doc) {
  doc.Parse(r.body.c_str());
  if (doc.HasParseError() || !doc.IsObject()) {
    return StatusAnswer(400, "BadRequest", "the body is not a JSON object");
  }
  if (KindOf(doc, "kind") != kind || KindOf(doc, "apiVersion") != api_version) {
    return StatusAnswer(400, "BadRequest",
                        fmt::format("the body is a {} {}, not a {} {}", KindOf(doc, "apiVersion"),
                                    KindOf(doc, "kind"), api_version, kind));
  }
  if (!doc.HasMember("metadata") || !doc["metadata"].IsObject()) {
    return StatusAnswer(400, "BadRequest", "metadata is missing");
  }
  return std::nullopt;
}

ApiResponse Conflict(State& s, const std::string& name) QRM_REQUIRES(s.mu) {
  ++s.conflicts;
  return StatusAnswer(409, "Conflict",
                      fmt::format("Operation cannot be fulfilled on {} \"{}\": the object has "
                                  "been modified; please apply your changes to the latest "
                                  "version and try again",
                                  s.resource, name));
}

ApiResponse NotFound(const State& s, const std::string& name) {
  return StatusAnswer(404, "NotFound", fmt::format("{} \"{}\" not found", s.resource, name));
}

// The key of the object a path's captures name: {name} or {namespace, name, ...}.
std::string KeyOf(const State& s, const ApiRequest& r) {
  return s.options.namespaced ? r.params.at(0) + "/" + r.params.at(1) : r.params.at(0);
}
std::string NameOf(const std::string& key) {
  return key.substr(key.find('/') + 1);
}

ApiResponse Create(State& s, const ApiRequest& r) {
  Document doc;
  if (auto bad = ParseBody(r, s.options.kind, s.options.api_version, doc)) return *bad;
  const std::string name = StringAt(doc, "metadata", "name");
  if (name.empty()) return StatusAnswer(400, "BadRequest", "metadata.name: Required value");
  std::string key = name;
  if (s.options.namespaced) {
    key = r.params.at(0) + "/" + name;
    SetString(doc, doc["metadata"], "namespace", r.params.at(0));
  }
  if (s.options.status_subresource && doc.HasMember("status")) doc.RemoveMember("status");
  MutexLock lock(s.mu);
  if (auto failed = ScriptedFailure(s)) return *failed;
  if (s.objects.contains(key)) {
    return StatusAnswer(409, "AlreadyExists",
                        fmt::format("{} \"{}\" already exists", s.resource, name));
  }
  ++s.writes;
  return ApiResponse{201, Store(s, key, doc, true)};
}

// PUT of the object (`status_only` false) or of its status subresource.
ApiResponse Update(State& s, const ApiRequest& r, bool status_only) {
  const std::string key = KeyOf(s, r);
  Document doc;
  if (auto bad = ParseBody(r, s.options.kind, s.options.api_version, doc)) return *bad;
  MutexLock lock(s.mu);
  if (auto failed = ScriptedFailure(s)) return *failed;
  auto it = s.objects.find(key);
  if (it == s.objects.end()) return NotFound(s, NameOf(key));
  Document stored;
  stored.Parse(it->second.c_str());
  if (StringAt(doc, "metadata", "resourceVersion") !=
      StringAt(stored, "metadata", "resourceVersion")) {
    return Conflict(s, NameOf(key));
  }
  Document& next = status_only ? stored : doc;
  const Document& from = status_only ? doc : stored;
  if (status_only || s.options.status_subresource) {  // the status comes from `from`
    if (next.HasMember("status")) next.RemoveMember("status");
    if (from.HasMember("status")) {
      Value status(from["status"], next.GetAllocator());
      next.AddMember("status", status, next.GetAllocator());
    }
  }
  ++s.writes;
  return ApiResponse{200, Store(s, key, next, false)};
}

ApiResponse Remove(State& s, const std::string& key) QRM_REQUIRES(s.mu) {
  auto it = s.objects.find(key);
  if (it == s.objects.end()) return NotFound(s, NameOf(key));
  Document doc;
  doc.Parse(it->second.c_str());
  s.objects.erase(it);
  const std::string json = Stamp(s, doc, false);
  Emit(s, "DELETED", key, json);
  return ApiResponse{200, json};
}

// The PodScheduled condition the binding sets (pkg/registry/core/pod/storage).
void SetScheduled(Document& pod) {
  Value& status = ObjectMember(pod, pod, "status");
  if (!status.HasMember("conditions") || !status["conditions"].IsArray()) {
    if (status.HasMember("conditions")) status.RemoveMember("conditions");
    status.AddMember("conditions", Value(rapidjson::kArrayType), pod.GetAllocator());
  }
  Value& conditions = status["conditions"];
  for (auto it = conditions.Begin(); it != conditions.End(); ++it) {
    if (it->IsObject() && it->HasMember("type") && (*it)["type"].IsString() &&
        std::string_view((*it)["type"].GetString()) == "PodScheduled") {
      conditions.Erase(it);
      break;
    }
  }
  Value condition(rapidjson::kObjectType);
  auto& a = pod.GetAllocator();
  condition.AddMember("type", "PodScheduled", a);
  condition.AddMember("status", "True", a);
  condition.AddMember("lastProbeTime", Value(rapidjson::kNullType), a);
  condition.AddMember("lastTransitionTime", Value(NowRfc3339().c_str(), a), a);
  conditions.PushBack(condition, a);
}

ApiResponse Bind(State& s, const ApiRequest& r) {
  const std::string key = KeyOf(s, r);
  Document binding;
  if (auto bad = ParseBody(r, "Binding", "v1", binding)) return *bad;
  const std::string node = StringAt(binding, "target", "name");
  if (node.empty()) return StatusAnswer(400, "BadRequest", "target.name: Required value");
  MutexLock lock(s.mu);
  if (auto failed = ScriptedFailure(s)) return *failed;
  auto it = s.objects.find(key);
  if (it == s.objects.end()) return NotFound(s, NameOf(key));
  Document pod;
  pod.Parse(it->second.c_str());
  Value& spec = ObjectMember(pod, pod, "spec");
  const std::string bound = StringAt(pod, "spec", "nodeName");
  if (!bound.empty()) {
    return StatusAnswer(409, "Conflict",
                        fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} "
                                    "is already assigned to node \"{}\"",
                                    NameOf(key), NameOf(key), bound));
  }
  SetString(pod, spec, "nodeName", node);
  SetScheduled(pod);
  ++s.writes;
  Store(s, key, pod, false);
  return StatusAnswer(201, "", "");
}

// The API server's 415 for a patch body of another media type than `want`.
std::optional<ApiResponse> UnlessMediaType(const ApiRequest& r, std::string_view want) {
  const std::string type = r.content_type.substr(0, r.content_type.find(';'));
  if (type == want) return std::nullopt;
  return StatusAnswer(415, "UnsupportedMediaType",
                      fmt::format("the body of the request was in an unknown format - accepted "
                                  "media types include: {} (got \"{}\")",
                                  want, r.content_type));
}

// A JSON Patch of the status (what qrm-advisor sends for extended resources).
ApiResponse PatchStatus(State& s, const ApiRequest& r) {
  if (auto refused = UnlessMediaType(r, "application/json-patch+json")) return *refused;
  const std::string key = KeyOf(s, r);
  MutexLock lock(s.mu);
  if (auto failed = ScriptedFailure(s)) return *failed;
  auto it = s.objects.find(key);
  if (it == s.objects.end()) return NotFound(s, NameOf(key));
  StatusOr<std::string> patched = ApplyJsonPatch(it->second, r.body);
  if (!patched.ok()) {
    const bool bad_body = patched.status().code() == StatusCode::kInvalidArgument;
    return StatusAnswer(bad_body ? 400 : 422, bad_body ? "BadRequest" : "Invalid",
                        patched.status().message());
  }
  Document doc;
  doc.Parse(patched->c_str());
  if (doc.HasParseError() || !doc.IsObject()) {
    return StatusAnswer(422, "Invalid", "the patched object is not a JSON object");
  }
  ++s.writes;
  return ApiResponse{200, Store(s, key, doc, false)};
}

// RFC 7386: an object in `patch` merges member by member (null removes one), anything else
// replaces the target whole (so a list, such as spec.taints, is replaced, never merged).
void MergeInto(Value& target, const Value& patch, Document::AllocatorType& a) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& m : patch.GetObject()) {
    auto it = target.FindMember(m.name);
    if (m.value.IsNull()) {
      if (it != target.MemberEnd()) target.EraseMember(it);
      continue;
    }
    if (it == target.MemberEnd()) {
      target.AddMember(Value(m.name, a), Value(rapidjson::kNullType), a);
      it = target.FindMember(m.name);
    }
    MergeInto(it->value, m.value, a);
  }
}

// A JSON merge patch of the object; metadata.resourceVersion in the patch is a precondition.
ApiResponse MergePatch(State& s, const ApiRequest& r) {
  if (auto refused = UnlessMediaType(r, "application/merge-patch+json")) return *refused;
  Document patch;
  patch.Parse(r.body.c_str());
  if (patch.HasParseError() || !patch.IsObject()) {
    return StatusAnswer(400, "BadRequest", "the body is not a JSON object");
  }
  const std::string key = KeyOf(s, r);
  MutexLock lock(s.mu);
  if (auto failed = ScriptedFailure(s)) return *failed;
  auto it = s.objects.find(key);
  if (it == s.objects.end()) return NotFound(s, NameOf(key));
  Document doc;
  doc.Parse(it->second.c_str());
  const std::string precondition = StringAt(patch, "metadata", "resourceVersion");
  if (!precondition.empty() && precondition != StringAt(doc, "metadata", "resourceVersion")) {
    return Conflict(s, NameOf(key));
  }
  Value stored_status;
  if (s.options.status_subresource && doc.HasMember("status")) {
    stored_status.CopyFrom(doc["status"], doc.GetAllocator());
  }
  MergeInto(doc, patch, doc.GetAllocator());
  if (s.options.status_subresource) {  // the main resource never writes the status
    if (doc.HasMember("status")) doc.RemoveMember("status");
    if (!stored_status.IsNull()) doc.AddMember("status", stored_status, doc.GetAllocator());
  }
  ++s.writes;
  return ApiResponse{200, Store(s, key, doc, false)};
}

// "/api/v1/pods" -> "/api/v1/namespaces/{}/pods".
std::string NamespacedPath(const std::string& path) {
  const size_t last = path.rfind('/');
  return path.substr(0, last) + "/namespaces/{}" + path.substr(last);
}

std::string ResourceName(const std::string& path) {
  // "/apis/<group>/<version>/<plural>" -> "<plural>.<group>"; "/api/v1/<plural>" -> "<plural>".
  std::vector<std::string> parts;
  size_t start = 1;
  while (start <= path.size()) {
    const size_t end = path.find('/', start);
    parts.push_back(path.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (parts.size() == 4 && parts[0] == "apis") return parts[3] + "." + parts[1];
  return parts.empty() ? path : parts.back();
}

void AddRoutes(TestApiServer& server, const std::shared_ptr<State>& s) {
  const CollectionOptions& o = s->options;
  const std::string objects = o.namespaced ? NamespacedPath(o.path) : o.path;
  server.AddRoute("GET", o.path,
                  [s](const ApiRequest& r) { return collection::ListOrWatch(*s, r, ""); });
  if (o.namespaced) {
    server.AddRoute("GET", objects, [s](const ApiRequest& r) {
      return collection::ListOrWatch(*s, r, r.params.at(0));
    });
  }
  server.AddRoute("POST", objects, [s](const ApiRequest& r) { return Create(*s, r); });
  server.AddRoute("GET", objects + "/{}", [s](const ApiRequest& r) {
    MutexLock lock(s->mu);
    auto it = s->objects.find(KeyOf(*s, r));
    return it == s->objects.end() ? NotFound(*s, NameOf(KeyOf(*s, r)))
                                  : ApiResponse{200, it->second};
  });
  server.AddRoute("PUT", objects + "/{}",
                  [s](const ApiRequest& r) { return Update(*s, r, false); });
  server.AddRoute("DELETE", objects + "/{}", [s](const ApiRequest& r) {
    MutexLock lock(s->mu);
    return Remove(*s, KeyOf(*s, r));
  });
  if (o.status_subresource) {
    server.AddRoute("PUT", objects + "/{}/status",
                    [s](const ApiRequest& r) { return Update(*s, r, true); });
  }
  if (o.status_patch) {
    server.AddRoute("PATCH", objects + "/{}/status",
                    [s](const ApiRequest& r) { return PatchStatus(*s, r); });
  }
  if (o.merge_patch) {
    server.AddRoute("PATCH", objects + "/{}",
                    [s](const ApiRequest& r) { return MergePatch(*s, r); });
  }
  if (o.binding) {
    server.AddRoute("POST", objects + "/{}/binding",
                    [s](const ApiRequest& r) { return Bind(*s, r); });
  }
}

}  // namespace

ObjectCollection::ObjectCollection(TestApiServer& server, CollectionOptions options)
    : state_(std::make_shared<State>()) {
  state_->options = std::move(options);
  state_->resource = ResourceName(state_->options.path);
  AddRoutes(server, state_);
}

ObjectCollection::~ObjectCollection() {
  CloseWatches();
}

std::optional<std::string> ObjectCollection::Get(const std::string& key) const {
  MutexLock lock(state_->mu);
  auto it = state_->objects.find(key);
  if (it == state_->objects.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> ObjectCollection::Names() const {
  MutexLock lock(state_->mu);
  std::vector<std::string> names;
  for (const auto& [name, json] : state_->objects) names.push_back(name);
  return names;
}

void ObjectCollection::Seed(const std::string& key, const std::string& json) {
  Document doc;
  doc.Parse(json.c_str());
  MutexLock lock(state_->mu);
  if (doc.HasParseError() || !doc.IsObject()) {  // stored as is: a test of bad objects
    state_->objects[key] = json;
    return;
  }
  Store(*state_, key, doc, !state_->objects.contains(key));
}

void ObjectCollection::Delete(const std::string& key) {
  MutexLock lock(state_->mu);
  if (state_->objects.contains(key)) Remove(*state_, key);
}

void ObjectCollection::Compact() {
  MutexLock lock(state_->mu);
  state_->history.clear();
  state_->compacted = state_->version;
}

void ObjectCollection::Bookmark() {
  collection::Bookmark(*state_);
}

void ObjectCollection::CloseWatches() {
  collection::CloseWatches(*state_);
}

int ObjectCollection::open_watches() const {
  MutexLock lock(state_->mu);
  int open = 0;
  for (const CollectionWatch& w : state_->watches) open += w.feed->cancelled() ? 0 : 1;
  return open;
}

int ObjectCollection::watch_requests() const {
  MutexLock lock(state_->mu);
  return state_->watch_requests;
}

int ObjectCollection::list_requests() const {
  MutexLock lock(state_->mu);
  return state_->list_requests;
}

int64_t ObjectCollection::resource_version() const {
  MutexLock lock(state_->mu);
  return state_->version;
}

void ObjectCollection::FailWrites(int code, int times) {
  MutexLock lock(state_->mu);
  state_->fail_code = code;
  state_->fail_times = times;
}

int ObjectCollection::writes() const {
  MutexLock lock(state_->mu);
  return state_->writes;
}

int ObjectCollection::conflicts() const {
  MutexLock lock(state_->mu);
  return state_->conflicts;
}

}  // namespace qrm::testing
