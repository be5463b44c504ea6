// Reading and checking what the inter-pod filters (pod_affinity.h) use of a pod: the required
// terms of spec.affinity.podAffinity and podAntiAffinity, and spec.topologySpreadConstraints.
// The checks are the API server's validation of those fields, so input Kubernetes would refuse
// is refused here too, naming the field and the value.
#pragma once

#include "cluster/drain/error_list.h"
#include "cluster/drain/snapshot.h"
#include "cluster/objects/json_io.h"
#include "common/status.h"

namespace qrm::cluster::drain {

// Fills pod->pod_affinity, pod_anti_affinity and spread from the pod's spec.
Status ReadPodAffinity(const json::Field& spec, DrainPod* pod);

// Operators, topology keys, maxSkew, whenUnsatisfiable, minDomains and the inclusion policies;
// a namespaceSelector that selects by label needs the snapshot's Namespaces.
void CheckPodAffinity(const ClusterSnapshot& snapshot, const DrainPod& pod, ErrorList* errors);

}  // namespace qrm::cluster::drain
