// The guard's Prometheus metrics (docs/metrics.md, "Guard"), apart from the runner's logic.
#pragma once

#include <string>
#include <vector>

#include "advisor/guard/eviction_walk.h"
#include "advisor/guard/guard_round.h"

namespace qrm::advisor {

// qrm_guard_metric_missing_total{metric}: one per round a metric had no fresh sample.
void CountMissing(const std::vector<std::string>& metrics);
// qrm_guard_policy_rejected_total: reloads refused (the last good policy stayed).
void CountPolicyRejected();
// qrm_guard_quota_changes_total{direction="down|up|release"}.
void CountQuotaChange(const guard::QuotaChange& change);
// qrm_guard_throttle_errors_total: qrm-host refused or did not answer a throttle call.
void CountThrottleError();
// qrm_guard_evictions_total{outcome,preview}.
void CountEviction(const guard::EvictionAttempt& attempt);
// qrm_guard_gap{ensurance}, qrm_guard_usage{ensurance}, qrm_guard_throttled_pods.
void ExportRound(const guard::GuardDecision& decision, size_t throttled_pods);

}  // namespace qrm::advisor
