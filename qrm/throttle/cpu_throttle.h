// CpuThrottle: a CPU quota qrm-host holds a container at on an operator's or the watermark
// guard's request (docs/guard.md), on top of what the plugins allocated.
//
// qrm-host stays the only writer of container resources: the guard asks for a quota through the
// admin API, the host persists it (throttle_store.h) and writes it as two owned fields,
// cpu_quota and cpu_period, into every request it sends or edits for the container (created
// again after a crash, the kubelet's own UpdateContainerResources, the reconcile loop's pushes).
// Each throttle is a lease: if its owner stops renewing it (the guard died and never came
// back), the host restores the container when it expires, so no crash leaves a pod throttled
// forever. Restoring writes back the quota and period the container had before (as the caller
// saw them when it first throttled), then the entry is forgotten.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace qrm::throttle {

// The kernel's bounds on cpu.cfs_period_us and its smallest cpu.cfs_quota_us.
inline constexpr int64_t kMinCpuPeriodUs = 1000;
inline constexpr int64_t kMaxCpuPeriodUs = 1000000;
inline constexpr int64_t kMinCpuQuotaUs = 1000;
inline constexpr int64_t kMaxThrottleLeaseS = 7 * 24 * 3600;
inline constexpr size_t kMaxThrottleTextBytes = 256;  // reason and owner

struct CpuThrottle {
  std::string pod_uid, container;
  int64_t quota_us = 0;  // what the container is held at
  int64_t period_us = 100000;
  int64_t restore_quota_us = -1;  // what it gets back: -1 is no limit
  int64_t restore_period_us = 100000;
  int64_t since_unix = 0;    // when it was first throttled (restore goes newest first)
  int64_t expires_unix = 0;  // the lease: restored at this time unless renewed
  std::string owner;         // who asked ("qrm-advisor", "qrmctl")
  std::string reason;        // for operators: why ("cpu-usage: node 1.9 cores > 1.6")
  bool restoring = false;    // cleared or expired: the restore values are being written

  // What the runtime should hold now: the restore values while restoring, else the throttle,
  // never above the container's own limit (a throttle only takes CPU away; an in-place resize
  // may have lowered the limit below it).
  int64_t EffectiveQuota() const {
    if (restoring) return restore_quota_us;
    if (restore_quota_us <= 0 || restore_period_us <= 0) return quota_us;
    const int64_t own = restore_quota_us * period_us / restore_period_us;
    return std::max(std::min(quota_us, own), kMinCpuQuotaUs);
  }
  int64_t EffectivePeriod() const { return restoring ? restore_period_us : period_us; }

  friend bool operator==(const CpuThrottle&, const CpuThrottle&) = default;
};

// What a caller asks for; the host fills since/expires and keeps the first restore values.
struct CpuThrottleRequest {
  std::string pod_uid, container;
  int64_t quota_us = 0;
  int64_t period_us = 100000;
  int64_t restore_quota_us = -1;
  int64_t restore_period_us = 100000;
  int64_t lease_s = 300;
  std::string owner, reason;
};

// kInvalidArgument naming the field and its value: empty pod uid or container, a period
// outside [1000, 1000000] us, a quota below 1000 us (restore quota: -1 or >= 1000), a lease
// outside [1, 7 days], an owner or reason over 256 bytes or with control characters.
Status ValidateThrottleRequest(const CpuThrottleRequest& request);

}  // namespace qrm::throttle
