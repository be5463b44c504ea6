#include "advisor/agent/kube_evictor.h"

#include "cluster/kube/eviction.h"

namespace qrm::advisor {

guard::EvictOutcome KubeEvictor::Evict(const guard::GuardCandidate& pod) {
  kube::EvictOptions options;
  options.grace_period_seconds = grace_s_.load();
  const kube::EvictionResult r = kube::EvictPod(client_, pod.pod_namespace, pod.pod_name, options);
  switch (r.outcome) {
    case kube::EvictionOutcome::kEvicted: return guard::EvictOutcome::kEvicted;
    case kube::EvictionOutcome::kBlockedByBudget: return guard::EvictOutcome::kBlockedByBudget;
    case kube::EvictionOutcome::kGone: return guard::EvictOutcome::kGone;
    case kube::EvictionOutcome::kError: break;
  }
  return guard::EvictOutcome::kError;
}

}  // namespace qrm::advisor
