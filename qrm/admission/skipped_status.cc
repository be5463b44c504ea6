#include "qrm/admission/skipped_status.h"

#include "common/log.h"
#include "common/metrics/metrics.h"
#include "qrm/admission/qos.h"

namespace qrm::admission {

void SkippedStatus::ReplayFailed(const Key& key, const Status& status) {
  if (IsPluginOutage(status)) return;
  MutexLock lock(mu_);
  auto [it, inserted] = refused_.try_emplace(key, status.message());
  if (!inserted) return;  // said once; still retried each tick
  const auto& [uid, container, resource] = key;
  Logger("admission")
      ->warn(
          "pod={} container={}: {} cannot be allocated: admitted while its plugin was down, its "
          "plugin now refuses it ({}); the container keeps running without it (confined to the "
          "CPUs no exclusive allocation holds if it has no cpuset); retried each reconcile tick",
          uid, container, resource, status.message());
  Publish();
}

void SkippedStatus::Allocated(const Key& key) {
  MutexLock lock(mu_);
  if (refused_.erase(key) == 0) return;
  const auto& [uid, container, resource] = key;
  Logger("admission")
      ->info("pod={} container={}: {} allocated after all", uid, container, resource);
  Publish();
}

void SkippedStatus::ForgetPod(const std::string& pod_uid) {
  MutexLock lock(mu_);
  std::erase_if(refused_, [&](const auto& e) { return std::get<0>(e.first) == pod_uid; });
  Publish();
}

std::string SkippedStatus::Refusal(const Key& key) const {
  MutexLock lock(mu_);
  auto it = refused_.find(key);
  return it == refused_.end() ? std::string() : it->second;
}

void SkippedStatus::Publish() {
  metrics::Default()
      .GetGauge("qrm_skipped_resources_unallocatable",
                "Resources containers were admitted without whose plugin, back again, refuses "
                "to allocate them.")
      .Set(static_cast<double>(refused_.size()));
}

}  // namespace qrm::admission
