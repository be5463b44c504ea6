// KubeEvictor: the guard's eviction mode "api": the policy/v1 Eviction API (cluster/kube), so
// the API server checks the pod's PodDisruptionBudgets (429: the walk moves on to the next
// candidate) and the kubelet stops the pod with its grace period, as `kubectl drain` does.
#pragma once

#include <atomic>
#include <cstdint>

#include "advisor/guard/eviction_walk.h"
#include "cluster/kube/kube_client.h"

namespace qrm::advisor {

class KubeEvictor : public guard::Evictor {
 public:
  explicit KubeEvictor(kube::KubeClient client) : client_(std::move(client)) {}

  guard::EvictOutcome Evict(const guard::GuardCandidate& pod) override;
  void SetGracePeriod(int64_t seconds) override { grace_s_ = seconds; }

 private:
  kube::KubeClient client_;
  std::atomic<int64_t> grace_s_ = 30;
};

}  // namespace qrm::advisor
