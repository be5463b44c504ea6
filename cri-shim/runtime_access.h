// The host's view of the runtime (qrm/reconcile/runtime.h), implemented over CRI:
//  * ShimApplier pushes qrm's owned fields to a container with UpdateContainerResources;
//  * ShimView lists the pods with a ready sandbox (ListPodSandbox).
// Both refuse (kUnavailable) until the shim has resynchronized with the runtime, so the
// reconcile loop neither updates nor garbage-collects from an empty picture.
#pragma once

#include <atomic>

#include "cri-shim/counters.h"
#include "cri-shim/runtime_channels.h"
#include "cri-shim/runtime_index.h"
#include "cri-shim/shim_options.h"
#include "qrm/reconcile/runtime.h"

namespace qrm::shim {

class ShimApplier final : public reconcile::RuntimeApplier {
 public:
  ShimApplier(const ShimOptions& options, RuntimeIndex& index, ShimCounters& counters)
      : options_(options), index_(index), counters_(counters) {}

  // Ready once the runtime is connected and the index rebuilt.
  void SetRuntime(RuntimeChannels* channels) { channels_.store(channels); }

  // UpdateContainerResources on the newest container of (pod, container) with every owned
  // field of `update` and its annotations. Errors (no such container yet, runtime errors)
  // are returned for the reconcile loop to retry, and counted.
  Status Apply(const std::string& pod_uid, const std::string& container,
               const apply::ContainerUpdate& update) override;

 private:
  const ShimOptions& options_;
  RuntimeIndex& index_;
  ShimCounters& counters_;
  std::atomic<RuntimeChannels*> channels_{nullptr};
};

class ShimView final : public reconcile::RuntimeView {
 public:
  explicit ShimView(const ShimOptions& options) : options_(options) {}
  void SetRuntime(RuntimeChannels* channels) { channels_.store(channels); }

  StatusOr<std::set<std::string>> ListPodUids() override;
  // Containers of ready sandboxes, with the pod identity the sandbox metadata gives.
  StatusOr<std::vector<reconcile::RuntimeContainer>> ListContainers() override;

 private:
  const ShimOptions& options_;
  std::atomic<RuntimeChannels*> channels_{nullptr};
};

}  // namespace qrm::shim
