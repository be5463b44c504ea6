#include "testing/kube/node_status_store.h"

#include <map>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/mutex.h"

namespace qrm::testing {

struct NodeStatusStore::State {
  mutable Mutex mu;
  std::map<std::string, std::string> nodes QRM_GUARDED_BY(mu);
  std::vector<RecordedPatch> patches QRM_GUARDED_BY(mu);
  int64_t version QRM_GUARDED_BY(mu) = 5000;
  int gets QRM_GUARDED_BY(mu) = 0;
  int fail_code QRM_GUARDED_BY(mu) = 0;
  int fail_times QRM_GUARDED_BY(mu) = 0;
};

namespace {

using State = NodeStatusStore::State;
using rapidjson::Document;
using rapidjson::Value;

constexpr const char* kJsonPatch = "application/json-patch+json";

std::string Serialize(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  v.Accept(w);
  return buffer.GetString();
}

// RFC 6901: "/a/b~1c" -> {"a", "b/c"}; "" is the whole document.
std::optional<std::vector<std::string>> SplitPointer(const std::string& pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') return std::nullopt;
  std::string token;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
    } else if (pointer[i] == '~') {
      if (i + 1 >= pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1')) {
        return std::nullopt;
      }
      token += pointer[++i] == '0' ? '~' : '/';
    } else {
      token += pointer[i];
    }
  }
  return tokens;
}

// An array index token: digits only, below `size` (or equal when `append_ok`).
std::optional<rapidjson::SizeType> Index(const std::string& token, rapidjson::SizeType size,
                                         bool append_ok) {
  if (append_ok && token == "-") return size;
  if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0')) {
    return std::nullopt;
  }
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  const auto i = static_cast<rapidjson::SizeType>(std::stoul(token));
  if (i > size || (i == size && !append_ok)) return std::nullopt;
  return i;
}

Value* Child(Value& parent, const std::string& token) {
  if (parent.IsObject()) {
    auto it = parent.FindMember(token.c_str());
    return it == parent.MemberEnd() ? nullptr : &it->value;
  }
  if (parent.IsArray()) {
    auto i = Index(token, parent.Size(), false);
    return i ? &parent[*i] : nullptr;
  }
  return nullptr;
}

class Patcher {
 public:
  explicit Patcher(Document& doc) : doc_(doc) {}

  // One operation; the error says why (the caller names the operation).
  Status Apply(const Value& op) {
    if (!op.IsObject() || !op.HasMember("op") || !op["op"].IsString() || !op.HasMember("path") ||
        !op["path"].IsString()) {
      return FailedPreconditionError("an operation needs a string op and a string path");
    }
    const std::string name = op["op"].GetString();
    auto tokens = SplitPointer(op["path"].GetString());
    if (!tokens) return FailedPreconditionError("the path is not a JSON pointer");
    const Value* value = op.HasMember("value") ? &op["value"] : nullptr;
    if ((name == "add" || name == "replace" || name == "test") && value == nullptr) {
      return FailedPreconditionError("missing value");
    }
    if (name == "add") return Add(*tokens, *value);
    if (name == "remove") return Remove(*tokens);
    if (name == "replace") return Replace(*tokens, *value);
    if (name == "test") return Test(*tokens, *value);
    return FailedPreconditionError("this operation is not served by the test store");
  }

 private:
  Value* Resolve(const std::vector<std::string>& tokens, size_t count) {
    Value* at = &doc_;
    for (size_t i = 0; i < count && at != nullptr; ++i) at = Child(*at, tokens[i]);
    return at;
  }
  Value* Parent(const std::vector<std::string>& tokens) {
    return tokens.empty() ? nullptr : Resolve(tokens, tokens.size() - 1);
  }
  Value Copy(const Value& v) { return Value(v, doc_.GetAllocator()); }

  Status Add(const std::vector<std::string>& tokens, const Value& value) {
    if (tokens.empty()) {
      doc_.CopyFrom(value, doc_.GetAllocator());
      return Status::Ok();
    }
    Value* parent = Parent(tokens);
    const std::string& key = tokens.back();
    if (parent != nullptr && parent->IsObject()) {
      if (Value* existing = Child(*parent, key)) {
        *existing = Copy(value);  // add on an existing member replaces it
      } else {
        parent->AddMember(Value(key.c_str(), doc_.GetAllocator()), Copy(value),
                          doc_.GetAllocator());
      }
      return Status::Ok();
    }
    if (parent != nullptr && parent->IsArray()) {
      auto i = Index(key, parent->Size(), true);
      if (!i) return FailedPreconditionError("the array index is out of range");
      parent->PushBack(Copy(value), doc_.GetAllocator());
      for (rapidjson::SizeType j = parent->Size() - 1; j > *i; --j)
        (*parent)[j].Swap((*parent)[j - 1]);
      return Status::Ok();
    }
    return FailedPreconditionError("the parent does not exist");
  }

  Status Remove(const std::vector<std::string>& tokens) {
    Value* parent = Parent(tokens);
    if (parent == nullptr || Child(*parent, tokens.back()) == nullptr) {
      return FailedPreconditionError("nothing to remove at the path");
    }
    if (parent->IsObject()) {
      parent->RemoveMember(tokens.back().c_str());
    } else {
      parent->Erase(parent->Begin() + *Index(tokens.back(), parent->Size(), false));
    }
    return Status::Ok();
  }

  Status Replace(const std::vector<std::string>& tokens, const Value& value) {
    Value* at = Resolve(tokens, tokens.size());
    if (at == nullptr) return FailedPreconditionError("nothing to replace at the path");
    *at = Copy(value);
    return Status::Ok();
  }

  Status Test(const std::vector<std::string>& tokens, const Value& value) {
    Value* at = Resolve(tokens, tokens.size());
    if (at == nullptr) return FailedPreconditionError("the path does not exist");
    if (*at != value) {
      return FailedPreconditionError(
          fmt::format("the value is {}, not {}", Serialize(*at), Serialize(value)));
    }
    return Status::Ok();
  }

  Document& doc_;
};

// The API server's validation of what a patch may leave: quantities in the resource lists.
Status CheckResourceLists(const Value& node) {
  if (!node.IsObject() || !node.HasMember("status") || !node["status"].IsObject()) {
    return Status::Ok();
  }
  for (const char* list : {"capacity", "allocatable"}) {
    auto it = node["status"].FindMember(list);
    if (it == node["status"].MemberEnd()) continue;
    if (!it->value.IsObject()) {
      return FailedPreconditionError(fmt::format("status.{}: not an object", list));
    }
    for (const auto& m : it->value.GetObject()) {
      if (!m.value.IsString()) {
        return FailedPreconditionError(fmt::format("status.{}[{}]: {} is not a quantity", list,
                                                   m.name.GetString(), Serialize(m.value)));
      }
    }
  }
  return Status::Ok();
}

std::optional<ApiResponse> ScriptedFailure(State& s) QRM_REQUIRES(s.mu) {
  if (s.fail_times == 0) return std::nullopt;
  --s.fail_times;
  return StatusAnswer(s.fail_code, "InternalError",
                      fmt::format("scripted failure of the test server ({})", s.fail_code));
}

// The stored node patched, with the stored spec and a new resourceVersion; or the answer.
StatusOr<std::string> PatchNode(State& s, const std::string& stored, const std::string& patch)
    QRM_REQUIRES(s.mu) {
  QRM_ASSIGN_OR_RETURN(std::string patched, ApplyJsonPatch(stored, patch));
  Document doc, old;
  doc.Parse(patched.c_str());
  old.Parse(stored.c_str());
  QRM_RETURN_IF_ERROR(CheckResourceLists(doc));
  if (!doc.IsObject()) return FailedPreconditionError("the patched node is not an object");
  doc.RemoveMember("spec");  // the status strategy keeps the stored spec
  if (old.IsObject() && old.HasMember("spec")) {
    doc.AddMember("spec", Value(old["spec"], doc.GetAllocator()), doc.GetAllocator());
  }
  if (!doc.HasMember("metadata") || !doc["metadata"].IsObject()) {
    doc.RemoveMember("metadata");
    doc.AddMember("metadata", Value(rapidjson::kObjectType), doc.GetAllocator());
  }
  Value& meta = doc["metadata"];
  meta.RemoveMember("resourceVersion");
  meta.AddMember("resourceVersion", Value(std::to_string(++s.version).c_str(), doc.GetAllocator()),
                 doc.GetAllocator());
  return Serialize(doc);
}

ApiResponse HandlePatch(State& s, const ApiRequest& r) {
  const std::string& name = r.params.at(0);
  MutexLock lock(s.mu);
  RecordedPatch record{name, r.content_type, r.body, 0};
  ApiResponse answer;
  auto stored = s.nodes.find(name);
  if (auto failure = ScriptedFailure(s)) {
    answer = *failure;
  } else if (r.content_type != kJsonPatch) {
    answer = StatusAnswer(415, "UnsupportedMediaType",
                          fmt::format("the body of the request was in an unknown format - "
                                      "accepted media types include: {}",
                                      kJsonPatch));
  } else if (stored == s.nodes.end()) {
    answer = StatusAnswer(404, "NotFound", fmt::format("nodes \"{}\" not found", name));
  } else if (auto patched = PatchNode(s, stored->second, r.body); !patched.ok()) {
    const bool bad_request = patched.status().code() == StatusCode::kInvalidArgument;
    answer = StatusAnswer(bad_request ? 400 : 422, bad_request ? "BadRequest" : "Invalid",
                          patched.status().message());
  } else {
    stored->second = *patched;
    answer.body = *patched;
  }
  record.code = answer.code;
  s.patches.push_back(std::move(record));
  return answer;
}

ApiResponse HandleGet(State& s, const ApiRequest& r) {
  MutexLock lock(s.mu);
  ++s.gets;
  if (auto failure = ScriptedFailure(s)) return *failure;
  auto it = s.nodes.find(r.params.at(0));
  if (it == s.nodes.end()) {
    return StatusAnswer(404, "NotFound", fmt::format("nodes \"{}\" not found", r.params.at(0)));
  }
  ApiResponse answer;
  answer.body = it->second;
  return answer;
}

}  // namespace

StatusOr<std::string> ApplyJsonPatch(const std::string& document, const std::string& patch) {
  Document ops;
  ops.Parse(patch.c_str());
  if (ops.HasParseError() || !ops.IsArray()) {
    return InvalidArgumentError("the JSON patch is not a JSON array of operations");
  }
  Document doc;
  doc.Parse(document.c_str());
  if (doc.HasParseError()) return InvalidArgumentError("the document is not JSON");
  Patcher patcher(doc);
  for (rapidjson::SizeType i = 0; i < ops.Size(); ++i) {
    if (Status s = patcher.Apply(ops[i]); !s.ok()) {
      return FailedPreconditionError(
          fmt::format("operation {} ({}): {}", i, Serialize(ops[i]), s.message()));
    }
  }
  return Serialize(doc);
}

NodeStatusStore::NodeStatusStore(TestApiServer& server) : state_(std::make_shared<State>()) {
  std::weak_ptr<State> weak = state_;
  server.AddRoute("GET", "/api/v1/nodes/{}", [weak](const ApiRequest& r) {
    auto s = weak.lock();
    return s ? HandleGet(*s, r) : StatusAnswer(404, "NotFound", "the store is gone");
  });
  server.AddRoute("PATCH", "/api/v1/nodes/{}/status", [weak](const ApiRequest& r) {
    auto s = weak.lock();
    return s ? HandlePatch(*s, r) : StatusAnswer(404, "NotFound", "the store is gone");
  });
}

NodeStatusStore::~NodeStatusStore() = default;

void NodeStatusStore::Put(const std::string& name, const std::string& json) {
  MutexLock lock(state_->mu);
  state_->nodes[name] = json;
}

std::optional<std::string> NodeStatusStore::Get(const std::string& name) const {
  MutexLock lock(state_->mu);
  auto it = state_->nodes.find(name);
  if (it == state_->nodes.end()) return std::nullopt;
  return it->second;
}

Status NodeStatusStore::Apply(const std::string& name, const std::string& patch) {
  MutexLock lock(state_->mu);
  auto it = state_->nodes.find(name);
  if (it == state_->nodes.end()) return NotFoundError(fmt::format("node {}: not stored", name));
  QRM_ASSIGN_OR_RETURN(std::string patched, PatchNode(*state_, it->second, patch));
  it->second = std::move(patched);
  return Status::Ok();
}

void NodeStatusStore::FailRequests(int code, int times) {
  MutexLock lock(state_->mu);
  state_->fail_code = code;
  state_->fail_times = times;
}

std::vector<RecordedPatch> NodeStatusStore::patches() const {
  MutexLock lock(state_->mu);
  return state_->patches;
}

int NodeStatusStore::gets() const {
  MutexLock lock(state_->mu);
  return state_->gets;
}

}  // namespace qrm::testing
