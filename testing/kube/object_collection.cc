#include "testing/kube/object_collection.h"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace qrm::testing {

struct ObjectCollection::State {
  CollectionOptions options;
  std::string resource;  // "nodemetrics.slo.koordinator.sh", for messages
  mutable Mutex mu;
  std::map<std::string, std::string> objects QRM_GUARDED_BY(mu);
  int64_t version QRM_GUARDED_BY(mu) = 1000;
  int writes QRM_GUARDED_BY(mu) = 0;
  int conflicts QRM_GUARDED_BY(mu) = 0;
  int fail_code QRM_GUARDED_BY(mu) = 0;
  int fail_times QRM_GUARDED_BY(mu) = 0;
};

namespace {

using State = ObjectCollection::State;
using rapidjson::Document;
using rapidjson::Value;

std::string Serialize(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  v.Accept(w);
  return buffer.GetString();
}

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

// metadata.resourceVersion <- a new version; on create also uid and creationTimestamp.
std::string Stamp(State& s, Document& doc, bool create) QRM_REQUIRES(s.mu) {
  if (!doc["metadata"].IsObject()) doc["metadata"].SetObject();
  Value& meta = doc["metadata"];
  SetString(doc, meta, "resourceVersion", std::to_string(++s.version));
  if (create) {
    SetString(doc, meta, "uid", fmt::format("uid-{}", s.version));
    SetString(doc, meta, "creationTimestamp", "2026-11-27T00:00:00Z");
  }
  ++s.writes;
  return Serialize(doc);
}

std::optional<ApiResponse> ScriptedFailure(State& s) QRM_REQUIRES(s.mu) {
  if (s.fail_times == 0) return std::nullopt;
  --s.fail_times;
  if (s.fail_code == 409) ++s.conflicts;
  return StatusAnswer(s.fail_code, s.fail_code == 409 ? "Conflict" : "InternalError",
                      fmt::format("scripted failure of the test server ({})", s.fail_code));
}

// The body as an object of this collection's kind, or the 400 answer.
std::optional<ApiResponse> ParseBody(const State& s, const ApiRequest& r, Document& doc) {
  doc.Parse(r.body.c_str());
  if (doc.HasParseError() || !doc.IsObject()) {
    return StatusAnswer(400, "BadRequest", "the body is not a JSON object");
  }
  const std::string kind =
      doc.HasMember("kind") && doc["kind"].IsString() ? doc["kind"].GetString() : "";
  const std::string version = doc.HasMember("apiVersion") && doc["apiVersion"].IsString()
                                  ? doc["apiVersion"].GetString()
                                  : "";
  if (kind != s.options.kind || version != s.options.api_version) {
    return StatusAnswer(400, "BadRequest",
                        fmt::format("the body is a {} {}, not a {} {}", version, kind,
                                    s.options.api_version, s.options.kind));
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

ApiResponse Create(State& s, const ApiRequest& r) {
  Document doc;
  if (auto bad = ParseBody(s, r, doc)) return *bad;
  const std::string name = StringAt(doc, "metadata", "name");
  if (name.empty()) return StatusAnswer(400, "BadRequest", "metadata.name: Required value");
  if (s.options.status_subresource && doc.HasMember("status")) doc.RemoveMember("status");
  MutexLock lock(s.mu);
  if (auto failed = ScriptedFailure(s)) return *failed;
  if (s.objects.contains(name)) {
    return StatusAnswer(409, "AlreadyExists",
                        fmt::format("{} \"{}\" already exists", s.resource, name));
  }
  return ApiResponse{201, s.objects[name] = Stamp(s, doc, true)};
}

// PUT of the object (`status_only` false) or of its status subresource.
ApiResponse Update(State& s, const ApiRequest& r, bool status_only) {
  const std::string& name = r.params.at(0);
  Document doc;
  if (auto bad = ParseBody(s, r, doc)) return *bad;
  MutexLock lock(s.mu);
  if (auto failed = ScriptedFailure(s)) return *failed;
  auto it = s.objects.find(name);
  if (it == s.objects.end()) return NotFound(s, name);
  Document stored;
  stored.Parse(it->second.c_str());
  if (StringAt(doc, "metadata", "resourceVersion") !=
      StringAt(stored, "metadata", "resourceVersion")) {
    return Conflict(s, name);
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
  it->second = Stamp(s, next, false);
  return ApiResponse{200, it->second};
}

ApiResponse List(State& s) {
  MutexLock lock(s.mu);
  std::string items;
  for (const auto& [name, json] : s.objects) items += (items.empty() ? "" : ",") + json;
  return ApiResponse{200, fmt::format(R"({{"kind":"{}List","apiVersion":"{}",)"
                                      R"("metadata":{{"resourceVersion":"{}"}},"items":[{}]}})",
                                      s.options.kind, s.options.api_version, s.version, items)};
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

}  // namespace

ObjectCollection::ObjectCollection(TestApiServer& server, CollectionOptions options)
    : state_(std::make_shared<State>()) {
  state_->options = std::move(options);
  state_->resource = ResourceName(state_->options.path);
  const std::string& path = state_->options.path;
  std::shared_ptr<State> s = state_;
  server.AddRoute("GET", path, [s](const ApiRequest&) { return List(*s); });
  server.AddRoute("POST", path, [s](const ApiRequest& r) { return Create(*s, r); });
  server.AddRoute("GET", path + "/{}", [s](const ApiRequest& r) {
    MutexLock lock(s->mu);
    auto it = s->objects.find(r.params.at(0));
    return it == s->objects.end() ? NotFound(*s, r.params.at(0)) : ApiResponse{200, it->second};
  });
  server.AddRoute("PUT", path + "/{}", [s](const ApiRequest& r) { return Update(*s, r, false); });
  if (state_->options.status_subresource) {
    server.AddRoute("PUT", path + "/{}/status",
                    [s](const ApiRequest& r) { return Update(*s, r, true); });
  }
}

ObjectCollection::~ObjectCollection() = default;

std::optional<std::string> ObjectCollection::Get(const std::string& name) const {
  MutexLock lock(state_->mu);
  auto it = state_->objects.find(name);
  if (it == state_->objects.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> ObjectCollection::Names() const {
  MutexLock lock(state_->mu);
  std::vector<std::string> names;
  for (const auto& [name, json] : state_->objects) names.push_back(name);
  return names;
}

void ObjectCollection::Seed(const std::string& name, const std::string& json) {
  Document doc;
  doc.Parse(json.c_str());
  MutexLock lock(state_->mu);
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("metadata")) {
    state_->objects[name] = json;
    return;
  }
  state_->objects[name] = Stamp(*state_, doc, true);
  --state_->writes;  // seeding is not a write of the code under test
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
