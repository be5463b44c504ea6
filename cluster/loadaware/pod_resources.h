// A pod's effective requests and limits as k8s.io/component-helpers/resource PodRequests and
// PodLimits compute them with default options (what the estimator calls):
//   containers summed; init containers define a floor, each one counting with the restartable
//   (sidecar) init containers started before it, and sidecars also adding to the sum;
//   pod-level resources (spec.resources) replace cpu, memory and hugepages-* when set;
//   overhead is added to every request, and to every limit that is present and not zero.
#pragma once

#include "cluster/loadaware/inputs.h"

namespace qrm::cluster::loadaware {

ResourceList PodRequests(const PodInput& pod);
ResourceList PodLimits(const PodInput& pod);

}  // namespace qrm::cluster::loadaware
