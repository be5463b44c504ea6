// The pods pod-resources answers for, as the kubelet does: every active pod, not only those
// qrm allocated something to.
//
// Active = in the host checkpoint (qrm holds resources for it: listed even while its first
// container is still being created) or known to the runtime with a ready sandbox and at
// least one container (RuntimeView::ListContainers). Every container either side knows is
// listed; one qrm allocated nothing for (a pod on the skip list, a container requesting no
// resource qrm manages) has empty resources. A ready sandbox with no container yet is not
// listed: qrm never sees the pod spec, so it cannot name the containers the kubelet would.
#pragma once

#include <vector>

#include "api/podresources_v1.pb.h"
#include "qrm/podresources/conversion.h"
#include "qrm/reconcile/runtime.h"
#include "qrm/state/pod_resources.h"

namespace qrm::podresources {

// Pods ordered by uid, containers by name.
std::vector<::v1::PodResources> ActivePodResources(
    const state::PodResources& checkpoint, const std::vector<reconcile::RuntimeContainer>& runtime,
    const PodResourcesMapping& mapping);

}  // namespace qrm::podresources
