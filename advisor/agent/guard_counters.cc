#include "advisor/agent/guard_counters.h"

#include "common/metrics/metrics.h"

namespace qrm::advisor {

void CountMissing(const std::vector<std::string>& metrics) {
  for (const std::string& m : metrics) {
    metrics::Default()
        .GetCounter("qrm_guard_metric_missing_total",
                    "Guard rounds in which a node metric had no fresh sample (no action for it).",
                    {{"metric", m}})
        .Inc();
  }
}

void CountPolicyRejected() {
  metrics::Default()
      .GetCounter("qrm_guard_policy_rejected_total",
                  "Guard policy reloads refused; the last good policy stayed in force.")
      .Inc();
}

void CountQuotaChange(const guard::QuotaChange& c) {
  const char* direction = !c.to ? "release" : (c.from && *c.to > *c.from ? "up" : "down");
  metrics::Default()
      .GetCounter("qrm_guard_quota_changes_total", "Pod CPU quotas the guard changed.",
                  {{"direction", direction}})
      .Inc();
}

void CountThrottleError() {
  metrics::Default()
      .GetCounter("qrm_guard_throttle_errors_total",
                  "Throttle calls qrm-host refused or did not answer (retried next round).")
      .Inc();
}

void CountEviction(const guard::EvictionAttempt& a) {
  metrics::Default()
      .GetCounter("qrm_guard_evictions_total",
                  "Evictions the guard tried (preview=true: dry-run or Preview, nobody evicted).",
                  {{"outcome", std::string(guard::EvictOutcomeName(a.outcome))},
                   {"preview", a.preview ? "true" : "false"}})
      .Inc();
}

void ExportRound(const guard::GuardDecision& decision, size_t throttled_pods) {
  auto& m = metrics::Default();
  for (const guard::EnsuranceReport& e : decision.ensurances) {
    m.GetGauge("qrm_guard_gap",
               "How far the node's usage is above the ensurance's watermark (0: below or "
               "unknown), in the metric's unit.",
               {{"ensurance", e.name}})
        .Set(e.gap.value_or(0));
    m.GetGauge("qrm_guard_usage", "The node's usage the ensurance last saw (NaN: missing).",
               {{"ensurance", e.name}})
        .Set(e.usage.value_or(std::numeric_limits<double>::quiet_NaN()));
  }
  m.GetGauge("qrm_guard_throttled_pods", "Pods the guard holds at a CPU quota.")
      .Set(static_cast<double>(throttled_pods));
}

}  // namespace qrm::advisor
