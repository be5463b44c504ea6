#include "advisor/agent/guard_answer.h"

namespace qrm::advisor {
namespace {

void FillEnsurance(const guard::EnsuranceReport& e, v1::GuardEnsurance* out) {
  out->set_name(e.name);
  out->set_metric(e.metric);
  out->set_preview(e.preview);
  out->set_missing(e.missing);
  out->set_usage(e.usage.value_or(0));
  out->set_watermark(e.watermark);
  out->set_restore_below(e.restore_below);
  out->set_gap(e.gap.value_or(0));
  out->set_room(e.room.value_or(0));
  out->set_above(e.above);
  out->set_below(e.below);
  out->set_fired(e.fired);
}

}  // namespace

v1::GetGuardResponse BuildGuard(const GuardRunner* guard) {
  v1::GetGuardResponse out;
  if (guard == nullptr) return out;
  const GuardSnapshot s = guard->Snapshot();
  out.set_enabled(true);
  out.set_policy_file(s.policy_file);
  out.set_policy_error(s.policy_error);
  out.set_eviction_mode(s.eviction_mode);
  out.set_last_round_unix(s.last_round);
  for (const auto& e : s.ensurances) FillEnsurance(e, out.add_ensurances());
  for (const auto& [key, tp] : s.throttled) {
    v1::GuardThrottledPod* p = out.add_throttled();
    p->set_pod(key);
    p->set_uid(tp.pod.pod_uid);
    p->set_quota_cores(tp.quota);
    p->set_ceiling_cores(tp.ceiling);
    p->set_usage_cores(tp.pod.cpu_usage.value_or(0));
    p->set_sequence(tp.sequence);
  }
  for (const std::string& m : s.missing_metrics) out.add_missing_metrics(m);
  for (const GuardAction& a : s.recent) {
    v1::GuardAction* r = out.add_recent();
    r->set_time_unix(a.time);
    r->set_pod(a.pod);
    r->set_action(a.action);
    r->set_detail(a.detail);
  }
  return out;
}

}  // namespace qrm::advisor
