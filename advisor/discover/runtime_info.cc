#include "advisor/discover/runtime_info.h"

#include <limits>
#include <string>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "common/json_string.h"
#include "common/rate_limited_log.h"

namespace qrm::advisor {
namespace {

using Value = rapidjson::Value;

// How much of a wrong value an error message shows: the spec holds whole environments.
constexpr size_t kShownValueBytes = 64;

// A wrong value as an error message shows it: scalars as JSON (cut short), containers by their
// size only, since writing out a deeply nested one would recurse as deep.
std::string Shown(const Value& v) {
  if (v.IsObject()) return fmt::format("an object of {} member(s)", v.MemberCount());
  if (v.IsArray()) return fmt::format("an array of {} element(s)", v.Size());
  return CapText(JsonText(v), kShownValueBytes);
}

Status WrongType(std::string_view path, std::string_view expected, const Value& found) {
  return DataLossError(
      fmt::format("verbose info: {}: expected {}, found {}", path, expected, Shown(found)));
}

// `object`'s member `key`, or nullptr when it is absent or null (how Go writes a nil
// pointer), so that both read as "not set".
const Value* Find(const Value* object, const char* key) {
  if (object == nullptr) return nullptr;
  const auto it = object->FindMember(key);
  if (it == object->MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

// The object at `key` of `parent`, nullptr when absent; an error when it is not an object.
StatusOr<const Value*> FindObject(const Value* parent, const char* key, std::string_view path) {
  const Value* v = Find(parent, key);
  if (v != nullptr && !v->IsObject()) return WrongType(path, "an object", *v);
  return v;
}

Status ReadPid(const Value& root, RuntimeInfo& info) {
  const Value* v = Find(&root, "pid");
  if (v == nullptr) return Status::Ok();
  // containerd writes a uint32, CRI-O an int; Linux pids stay far below 2^31.
  if (!v->IsInt64() || v->GetInt64() < 0 || v->GetInt64() > std::numeric_limits<int32_t>::max()) {
    return WrongType("pid", "a process id (0 to 2^31-1)", *v);
  }
  info.pid = v->GetInt64();
  return Status::Ok();
}

Status ReadCgroupsPath(const Value* linux_spec, RuntimeInfo& info) {
  const Value* v = Find(linux_spec, "cgroupsPath");
  if (v == nullptr) return Status::Ok();
  if (!v->IsString()) return WrongType("runtimeSpec.linux.cgroupsPath", "a string", *v);
  info.cgroups_path = JsonString(*v);
  return Status::Ok();
}

Status ReadUint(const Value* object, const char* key, std::string_view path, uint64_t& out) {
  const Value* v = Find(object, key);
  if (v == nullptr) return Status::Ok();
  if (!v->IsUint64()) return WrongType(path, "an unsigned integer", *v);
  out = v->GetUint64();
  return Status::Ok();
}

Status ReadInt(const Value* object, const char* key, std::string_view path, int64_t& out) {
  const Value* v = Find(object, key);
  if (v == nullptr) return Status::Ok();
  if (!v->IsInt64()) return WrongType(path, "an integer", *v);
  out = v->GetInt64();
  return Status::Ok();
}

Status ReadResources(const Value* linux_spec, RuntimeInfo& info) {
  QRM_ASSIGN_OR_RETURN(const Value* resources,
                       FindObject(linux_spec, "resources", "runtimeSpec.linux.resources"));
  QRM_ASSIGN_OR_RETURN(const Value* cpu,
                       FindObject(resources, "cpu", "runtimeSpec.linux.resources.cpu"));
  QRM_ASSIGN_OR_RETURN(const Value* memory,
                       FindObject(resources, "memory", "runtimeSpec.linux.resources.memory"));
  QRM_RETURN_IF_ERROR(
      ReadUint(cpu, "shares", "runtimeSpec.linux.resources.cpu.shares", info.cpu_shares));
  QRM_RETURN_IF_ERROR(
      ReadInt(cpu, "quota", "runtimeSpec.linux.resources.cpu.quota", info.cpu_quota));
  QRM_RETURN_IF_ERROR(
      ReadUint(cpu, "period", "runtimeSpec.linux.resources.cpu.period", info.cpu_period));
  return ReadInt(memory, "limit", "runtimeSpec.linux.resources.memory.limit", info.memory_limit);
}

}  // namespace

StatusOr<RuntimeInfo> ParseRuntimeInfo(std::string_view json) {
  rapidjson::Document doc;
  // Iterative: a runtime's document is trusted, but a deeply nested one must not be able to
  // exhaust the stack of the advisor.
  doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
  if (doc.HasParseError()) {
    return DataLossError(fmt::format("verbose info: not JSON: {} at offset {}",
                                     rapidjson::GetParseError_En(doc.GetParseError()),
                                     doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) return WrongType("(document)", "an object", doc);
  RuntimeInfo info;
  QRM_RETURN_IF_ERROR(ReadPid(doc, info));
  QRM_ASSIGN_OR_RETURN(const Value* spec, FindObject(&doc, "runtimeSpec", "runtimeSpec"));
  QRM_ASSIGN_OR_RETURN(const Value* linux_spec, FindObject(spec, "linux", "runtimeSpec.linux"));
  QRM_RETURN_IF_ERROR(ReadCgroupsPath(linux_spec, info));
  QRM_RETURN_IF_ERROR(ReadResources(linux_spec, info));
  return info;
}

}  // namespace qrm::advisor
