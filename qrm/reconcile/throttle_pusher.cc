#include "qrm/reconcile/throttle_pusher.h"

#include <set>

#include "common/log.h"
#include "common/metrics/metrics.h"

namespace qrm::reconcile {
namespace {

void RecordTick(const ThrottleTickStats& stats, size_t held) {
  auto& m = metrics::Default();
  m.GetCounter("qrm_throttle_pushes_total", "CPU throttles and restores pushed to the runtime.")
      .Inc(stats.pushed);
  m.GetCounter("qrm_throttle_push_failures_total",
               "CPU throttle pushes the runtime refused (retried next tick).")
      .Inc(stats.push_failures);
  m.GetCounter("qrm_throttle_leases_expired_total",
               "CPU throttles restored because their owner stopped renewing the lease.")
      .Inc(stats.expired);
  m.GetGauge("qrm_throttled_containers", "Containers qrm-host holds at a CPU throttle.")
      .Set(static_cast<double>(held));
}

// The runtime says there is no such container (gone, or not running and not updatable): its
// quota went with it. Any other failure may leave it running throttled: tried again next tick.
bool NothingToRestore(const Status& s) {
  return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kFailedPrecondition;
}

// Forgets one entry (a restore with nothing left to write).
Status Forget(throttle::ThrottleStore& store, const throttle::CpuThrottle& t) {
  QRM_ASSIGN_OR_RETURN(bool cleared, store.Clear(t.pod_uid, t.container));
  if (!cleared) return Status::Ok();
  throttle::CpuThrottle restoring = t;
  restoring.restoring = true;
  return store.Applied({t.pod_uid, t.container}, restoring.EffectiveQuota(),
                       restoring.EffectivePeriod());
}

}  // namespace

bool ThrottlePusher::RestoreUnheld(const throttle::CpuThrottle& t) {
  throttle::CpuThrottle restoring = t;
  restoring.restoring = true;
  const Status s = writer_.WriteRestore(t.pod_uid, t.container, restoring.EffectiveQuota(),
                                        restoring.EffectivePeriod());
  auto log = Logger("throttle");
  if (s.ok()) {
    log->info(
        "pod={} container={}: restored (quota {} us per {} us); the host no longer holds "
        "its pod",
        t.pod_uid, t.container, restoring.EffectiveQuota(), restoring.EffectivePeriod());
    return true;
  }
  if (NothingToRestore(s)) {
    log->info("pod={} container={}: throttle forgotten, nothing to restore: {}", t.pod_uid,
              t.container, s.message());
    return true;
  }
  log->warn(
      "pod={} container={}: cannot restore the throttle of a pod the host no longer "
      "holds, retrying next tick: {}",
      t.pod_uid, t.container, s.message());
  return false;
}

// Throttles of containers the host no longer holds are forgotten: a pod that left the
// checkpoint (restored first, its container may run on), or a container it no longer lists.
StatusOr<int> ThrottlePusher::ForgetUnheld(throttle::ThrottleStore& store,
                                           const state::PodResources& pods) {
  int forgotten = 0;
  for (const throttle::CpuThrottle& t : store.List()) {
    auto pod = pods.find(t.pod_uid);
    if (pod != pods.end() && pod->second->containers.contains(t.container)) continue;
    if (pod == pods.end()) {
      // Admitted (and throttled) after `pods` was read: held, not lost.
      if (admission_.CurrentUpdate(t.pod_uid, t.container).ok()) continue;
      if (!RestoreUnheld(t)) continue;
    }
    QRM_RETURN_IF_ERROR(Forget(store, t));
    ++forgotten;
  }
  return forgotten;
}

Status ThrottlePusher::Push(const throttle::ThrottleStore::Key& key) {
  throttle::ThrottleStore* store = admission_.throttles();
  if (store == nullptr) return Status::Ok();
  return PushTo(*store, key);
}

Status ThrottlePusher::PushTo(throttle::ThrottleStore& store,
                              const throttle::ThrottleStore::Key& key) {
  return writer_.WriteCurrent(
      key.first, key.second,
      [](const apply::ContainerUpdate& update) {
        return update.owned.contains(apply::OciProperty::kCpuQuota);  // else: no throttle
      },
      [&](const apply::ContainerUpdate& written) {
        return store.Applied(key, written.resources.cpu_quota(), written.resources.cpu_period());
      });
}

ThrottleTickStats ThrottlePusher::Tick(const state::PodResources& pods) {
  ThrottleTickStats stats;
  throttle::ThrottleStore* store = admission_.throttles();
  if (store == nullptr) return stats;
  auto log = Logger("throttle");
  if (auto expired = store->ExpireLeases(); expired.ok()) {
    stats.expired = static_cast<int>(expired->size());
  } else {
    log->error("cannot persist expired throttle leases, retrying next tick: {}",
               expired.status().message());
  }
  if (auto forgotten = ForgetUnheld(*store, pods); forgotten.ok()) {
    stats.forgotten = *forgotten;
  } else {
    log->error("cannot forget the throttles of gone containers: {}", forgotten.status().message());
  }
  for (const throttle::ThrottleStore::Key& key : store->Pending()) {
    if (!pods.contains(key.first)) continue;  // unheld: ForgetUnheld restores it
    if (Status s = PushTo(*store, key); !s.ok()) {
      ++stats.push_failures;
      log->warn("pod={} container={}: throttle push failed, retrying next tick: {}", key.first,
                key.second, s.message());
      continue;
    }
    ++stats.pushed;
  }
  RecordTick(stats, store->List().size());
  return stats;
}

}  // namespace qrm::reconcile
