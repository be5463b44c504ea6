#include "qrm/throttle/throttle_codec.h"

#include <set>
#include <string>

#include <fmt/format.h>

namespace qrm::throttle {
namespace {

namespace rj = rapidjson;

void AddString(rj::Value& object, const char* key, const std::string& value,
               rj::Document::AllocatorType& a) {
  // Length-aware: a NUL inside a value (a reason is free text) is kept, not cut there.
  object.AddMember(rj::StringRef(key),
                   rj::Value(value.data(), static_cast<rj::SizeType>(value.size()), a), a);
}

rj::Value EncodeOne(const CpuThrottle& t, rj::Document::AllocatorType& a) {
  rj::Value o(rj::kObjectType);
  AddString(o, "pod_uid", t.pod_uid, a);
  AddString(o, "container", t.container, a);
  o.AddMember("quota_us", t.quota_us, a);
  o.AddMember("period_us", t.period_us, a);
  o.AddMember("restore_quota_us", t.restore_quota_us, a);
  o.AddMember("restore_period_us", t.restore_period_us, a);
  o.AddMember("since_unix", t.since_unix, a);
  o.AddMember("expires_unix", t.expires_unix, a);
  AddString(o, "owner", t.owner, a);
  AddString(o, "reason", t.reason, a);
  o.AddMember("restoring", t.restoring, a);
  return o;
}

Status Bad(const std::string& where, const std::string& what) {
  return DataLossError(fmt::format("throttle file: {}: {}", where, what));
}

StatusOr<int64_t> Int(const rj::Value& o, const char* key, const std::string& where) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsInt64()) {
    return Bad(where + "." + key, "missing or not an integer");
  }
  return it->value.GetInt64();
}

StatusOr<std::string> Text(const rj::Value& o, const char* key, const std::string& where) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd() || !it->value.IsString()) {
    return Bad(where + "." + key, "missing or not a string");
  }
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

Status CheckMembers(const rj::Value& o, const std::string& where) {
  static const std::set<std::string> kKnown = {
      "pod_uid",           "container",  "quota_us",     "period_us", "restore_quota_us",
      "restore_period_us", "since_unix", "expires_unix", "owner",     "reason",
      "restoring"};
  for (const auto& m : o.GetObject()) {
    const std::string name(m.name.GetString(), m.name.GetStringLength());
    if (!kKnown.contains(name)) return Bad(fmt::format("{}.{}", where, name), "unknown member");
  }
  return Status::Ok();
}

StatusOr<CpuThrottle> DecodeOne(const rj::Value& o, const std::string& where) {
  if (!o.IsObject()) return Bad(where, "not an object");
  QRM_RETURN_IF_ERROR(CheckMembers(o, where));
  CpuThrottle t;
  QRM_ASSIGN_OR_RETURN(t.pod_uid, Text(o, "pod_uid", where));
  QRM_ASSIGN_OR_RETURN(t.container, Text(o, "container", where));
  QRM_ASSIGN_OR_RETURN(t.quota_us, Int(o, "quota_us", where));
  QRM_ASSIGN_OR_RETURN(t.period_us, Int(o, "period_us", where));
  QRM_ASSIGN_OR_RETURN(t.restore_quota_us, Int(o, "restore_quota_us", where));
  QRM_ASSIGN_OR_RETURN(t.restore_period_us, Int(o, "restore_period_us", where));
  QRM_ASSIGN_OR_RETURN(t.since_unix, Int(o, "since_unix", where));
  QRM_ASSIGN_OR_RETURN(t.expires_unix, Int(o, "expires_unix", where));
  QRM_ASSIGN_OR_RETURN(t.owner, Text(o, "owner", where));
  QRM_ASSIGN_OR_RETURN(t.reason, Text(o, "reason", where));
  auto restoring = o.FindMember("restoring");
  if (restoring == o.MemberEnd() || !restoring->value.IsBool()) {
    return Bad(where + ".restoring", "missing or not a boolean");
  }
  t.restoring = restoring->value.GetBool();
  // The same bounds a request must meet: a file that breaks them was not written by qrm.
  CpuThrottleRequest as_request{
      t.pod_uid,           t.container, t.quota_us, t.period_us, t.restore_quota_us,
      t.restore_period_us, 1,           t.owner,    t.reason};
  if (Status s = ValidateThrottleRequest(as_request); !s.ok()) return Bad(where, s.message());
  return t;
}

}  // namespace

void EncodeThrottles(const std::vector<CpuThrottle>& throttles, rj::Document& out) {
  out.SetObject();
  auto& a = out.GetAllocator();
  rj::Value list(rj::kArrayType);
  for (const CpuThrottle& t : throttles) list.PushBack(EncodeOne(t, a), a);
  out.AddMember("throttles", list, a);
}

StatusOr<std::vector<CpuThrottle>> DecodeThrottles(const rj::Value& data) {
  if (!data.IsObject()) return Bad("data", "not an object");
  auto list = data.FindMember("throttles");
  if (list == data.MemberEnd() || !list->value.IsArray()) {
    return Bad("throttles", "missing or not an array");
  }
  if (data.MemberCount() != 1) return Bad("data", "members other than throttles");
  std::vector<CpuThrottle> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (rj::SizeType i = 0; i < list->value.Size(); ++i) {
    const std::string where = fmt::format("throttles[{}]", i);
    QRM_ASSIGN_OR_RETURN(CpuThrottle t, DecodeOne(list->value[i], where));
    if (!seen.insert({t.pod_uid, t.container}).second) {
      return Bad(where, fmt::format("pod {} container {} listed twice", t.pod_uid, t.container));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace qrm::throttle
