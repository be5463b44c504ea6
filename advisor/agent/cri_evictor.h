// CriEvictor: the guard's eviction mode "cri", for nodes without a Kubernetes control plane:
// it stops the pod's sandbox (StopPodSandbox: every container of the pod, then its network)
// through the CRI runtime. This is not a Kubernetes eviction: no PodDisruptionBudget is
// consulted, and a kubelet that still runs the pod starts it again. On a node with a control
// plane use mode "api" (docs/guard.md).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "advisor/guard/eviction_walk.h"
#include "api/cri_runtime_v1.grpc.pb.h"
#include "common/log.h"

namespace qrm::advisor {

class CriEvictor : public guard::Evictor {
 public:
  // `endpoint` as ContainerDirectory takes it; `timeout` bounds each call (a stop waits for
  // the containers to exit: give it the grace period and some).
  CriEvictor(const std::string& endpoint, std::chrono::milliseconds timeout);

  // The pod's ready sandboxes (by its uid label) are stopped: kEvicted; none: kGone; a call
  // that fails: kError (logged with the pod and the runtime's message).
  guard::EvictOutcome Evict(const guard::GuardCandidate& pod) override;

 private:
  std::unique_ptr<::runtime::v1::RuntimeService::Stub> stub_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace qrm::advisor
