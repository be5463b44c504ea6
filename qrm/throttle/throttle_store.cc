#include "qrm/throttle/throttle_store.h"

#include <chrono>

#include <fmt/format.h>

#include "checkpoint/checkpoint_file.h"
#include "common/log.h"
#include "qrm/throttle/throttle_codec.h"

namespace qrm::throttle {
namespace {

constexpr uint32_t kVersion = 1;

int64_t WallSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Ref(const ThrottleStore::Key& key) {
  return fmt::format("pod={} container={}", key.first, key.second);
}

}  // namespace

ThrottleStore::ThrottleStore(std::string path, Clock now)
    : path_(std::move(path)), now_(now ? std::move(now) : Clock(WallSeconds)) {}

Status ThrottleStore::Load() {
  MutexLock write(write_mu_);
  auto cp = checkpoint::Read(path_);
  MutexLock lock(mu_);
  entries_.clear();
  in_runtime_.clear();
  if (!cp.ok()) return checkpoint::IsMissing(cp.status()) ? Status::Ok() : cp.status();
  QRM_ASSIGN_OR_RETURN(auto throttles, DecodeThrottles(cp->data));
  for (CpuThrottle& t : throttles) {
    Key key{t.pod_uid, t.container};
    entries_.emplace(std::move(key), std::move(t));
  }
  return Status::Ok();
}

ThrottleStore::Entries ThrottleStore::Current() const {
  MutexLock lock(mu_);
  return entries_;
}

Status ThrottleStore::Commit(Entries next, const std::vector<Key>& not_in_runtime) {
  std::vector<CpuThrottle> list;
  list.reserve(next.size());
  for (const auto& [key, t] : next) list.push_back(t);
  rapidjson::Document data;
  EncodeThrottles(list, data);
  QRM_RETURN_IF_ERROR(checkpoint::Write(path_, kVersion, data));
  MutexLock lock(mu_);
  entries_ = std::move(next);
  for (const Key& key : not_in_runtime) in_runtime_.erase(key);
  for (auto it = in_runtime_.begin(); it != in_runtime_.end();) {  // no lambda: mu_ is seen
    it = entries_.contains(*it) ? std::next(it) : in_runtime_.erase(it);
  }
  return Status::Ok();
}

StatusOr<CpuThrottle> ThrottleStore::Set(const CpuThrottleRequest& r) {
  QRM_RETURN_IF_ERROR(ValidateThrottleRequest(r));
  const Key key{r.pod_uid, r.container};
  const int64_t now = now_();
  MutexLock write(write_mu_);
  Entries next = Current();
  auto [it, fresh] = next.try_emplace(key);
  CpuThrottle& t = it->second;
  const CpuThrottle before = t;
  if (fresh) {
    t.pod_uid = r.pod_uid;
    t.container = r.container;
    t.restore_quota_us = r.restore_quota_us;
    t.restore_period_us = r.restore_period_us;
    t.since_unix = now;
  }
  t.quota_us = r.quota_us;
  t.period_us = r.period_us;
  t.expires_unix = now + r.lease_s;
  t.owner = r.owner;
  t.reason = r.reason;
  t.restoring = false;
  const bool runtime_changes = fresh || before.EffectiveQuota() != t.EffectiveQuota() ||
                               before.EffectivePeriod() != t.EffectivePeriod();
  CpuThrottle stored = t;
  std::vector<Key> changed;
  if (runtime_changes) changed.push_back(key);
  QRM_RETURN_IF_ERROR(Commit(std::move(next), changed));
  return stored;
}

StatusOr<bool> ThrottleStore::Clear(const std::string& pod_uid, const std::string& container) {
  const Key key{pod_uid, container};
  MutexLock write(write_mu_);
  Entries next = Current();
  auto it = next.find(key);
  if (it == next.end()) return false;
  if (it->second.restoring) return true;
  it->second.restoring = true;
  QRM_RETURN_IF_ERROR(Commit(std::move(next), {key}));
  return true;
}

StatusOr<std::vector<ThrottleStore::Key>> ThrottleStore::ExpireLeases() {
  const int64_t now = now_();
  MutexLock write(write_mu_);
  std::vector<Key> expired;
  Entries next = Current();
  for (auto& [key, t] : next) {
    if (t.restoring || t.expires_unix > now) continue;
    t.restoring = true;
    expired.push_back(key);
  }
  if (expired.empty()) return expired;
  QRM_RETURN_IF_ERROR(Commit(std::move(next), expired));
  for (const Key& key : expired) {
    Logger("throttle")
        ->warn("{}: throttle lease expired (its owner stopped renewing it); restoring", Ref(key));
  }
  return expired;
}

Status ThrottleStore::NoteKubeletLimit(const std::string& pod_uid, const std::string& container,
                                       int64_t quota_us, int64_t period_us) {
  // 0 is "unchanged" in the CRI: an update of the cpuset alone (the kubelet's CPU manager)
  // says nothing about the limit.
  if (quota_us == 0 || quota_us < -1) return Status::Ok();
  const Key key{pod_uid, container};
  const int64_t restore_quota = quota_us;
  const int64_t restore_period = period_us > 0 ? period_us : 100000;
  MutexLock write(write_mu_);
  Entries next = Current();
  auto it = next.find(key);
  if (it == next.end()) return Status::Ok();
  if (it->second.restore_quota_us == restore_quota &&
      it->second.restore_period_us == restore_period) {
    return Status::Ok();
  }
  it->second.restore_quota_us = restore_quota;
  it->second.restore_period_us = restore_period;
  std::vector<Key> changed;
  if (it->second.restoring) changed.push_back(key);  // the values pushed are the restore ones
  return Commit(std::move(next), changed);
}

void ThrottleStore::Overlay(const std::string& pod_uid, const std::string& container,
                            apply::ContainerUpdate* update) const {
  MutexLock lock(mu_);
  auto it = entries_.find({pod_uid, container});
  if (it == entries_.end()) return;
  update->resources.set_cpu_quota(it->second.EffectiveQuota());
  update->resources.set_cpu_period(it->second.EffectivePeriod());
  update->owned.insert(apply::OciProperty::kCpuQuota);
  update->owned.insert(apply::OciProperty::kCpuPeriod);
}

std::vector<ThrottleStore::Key> ThrottleStore::Pending() const {
  MutexLock lock(mu_);
  std::vector<Key> out;
  for (const auto& [key, t] : entries_) {
    if (!in_runtime_.contains(key)) out.push_back(key);
  }
  return out;
}

bool ThrottleStore::IsPending(const Key& key) const {
  MutexLock lock(mu_);
  return entries_.contains(key) && !in_runtime_.contains(key);
}

Status ThrottleStore::Applied(const Key& key, int64_t quota_us, int64_t period_us) {
  MutexLock write(write_mu_);
  {
    MutexLock lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return Status::Ok();
    const CpuThrottle& t = it->second;
    if (t.EffectiveQuota() != quota_us || t.EffectivePeriod() != period_us) return Status::Ok();
    if (!t.restoring) {
      in_runtime_.insert(key);
      return Status::Ok();
    }
  }
  Entries next = Current();
  next.erase(key);
  QRM_RETURN_IF_ERROR(Commit(std::move(next)));
  Logger("throttle")->info("{}: restored (quota {} us per {} us)", Ref(key), quota_us, period_us);
  return Status::Ok();
}

std::optional<CpuThrottle> ThrottleStore::Get(const std::string& pod_uid,
                                              const std::string& container) const {
  MutexLock lock(mu_);
  auto it = entries_.find({pod_uid, container});
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

std::vector<CpuThrottle> ThrottleStore::List() const {
  MutexLock lock(mu_);
  std::vector<CpuThrottle> out;
  for (const auto& [key, t] : entries_) out.push_back(t);
  return out;
}

}  // namespace qrm::throttle
