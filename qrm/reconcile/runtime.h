// The host's view of the container runtime, implemented by the CRI shim (and
// by recording fakes in tests). qrm never includes the shim: it defines these
// and the shim implements them.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "qrm/apply/container_update.h"

namespace qrm::reconcile {

// Pushes the fields qrm owns to a running container (UpdateContainerResources).
class RuntimeApplier {
 public:
  virtual ~RuntimeApplier() = default;
  virtual Status Apply(const std::string& pod_uid, const std::string& container,
                       const apply::ContainerUpdate& update) = 0;
};

// A container the runtime has (created, running or exited, not yet removed), with its
// pod's identity from the sandbox metadata.
struct RuntimeContainer {
  std::string pod_uid, pod_name, pod_namespace, container_name;
};

// Which pods and containers the runtime still has.
class RuntimeView {
 public:
  virtual ~RuntimeView() = default;
  // Pods with a ready sandbox.
  virtual StatusOr<std::set<std::string>> ListPodUids() = 0;
  // Containers of ready pods. Used to adopt allocations the plugins hold but the host
  // checkpoint lost (the reconcile loop needs the pod's name and namespace for them). The
  // default refuses with kUnimplemented: such allocations are then left alone.
  virtual StatusOr<std::vector<RuntimeContainer>> ListContainers() {
    return UnimplementedError("this RuntimeView does not list containers");
  }
};

}  // namespace qrm::reconcile
