// The host's view of the container runtime, implemented by the CRI shim (and
// by recording fakes in tests). qrm never includes the shim: it defines these
// and the shim implements them.
#pragma once

#include <set>
#include <string>

#include "common/status.h"
#include "qrm/apply/container_update.h"

namespace qrm::host {

// Pushes the fields qrm owns to a running container (UpdateContainerResources).
class RuntimeApplier {
 public:
  virtual ~RuntimeApplier() = default;
  virtual Status Apply(const std::string& pod_uid, const std::string& container,
                       const ContainerUpdate& update) = 0;
};

// Which pods the runtime still has.
class RuntimeView {
 public:
  virtual ~RuntimeView() = default;
  virtual StatusOr<std::set<std::string>> ListPodUids() = 0;
};

}  // namespace qrm::host
