// A pod's Koordinator priority class, as extension.GetPodPriorityClassWithDefault resolves it
// (apis/extension/priority.go, priority_utils.go, qos_utils.go), and the resource names a
// class's requests are written in (TranslateResourceNameByPriorityClass, resource.go).
#pragma once

#include <string_view>

#include "cluster/loadaware/inputs.h"

namespace qrm::cluster::loadaware {

enum class PriorityClass { kNone, kProd, kMid, kBatch, kFree };

// "koord-prod", "koord-mid", "koord-batch", "koord-free" or "".
std::string_view PriorityClassName(PriorityClass priority);

// The koordinator.sh/priority-class label when present (an unknown value counts as none);
// otherwise spec.priority's band (prod 9000-9999, mid 7000-7999, batch 5000-5999, free
// 3000-3999). With none, the QoS decides: the koordinator.sh/qosClass label, else the
// Kubernetes QoS (status.qosClass, computed from the containers when empty): SYSTEM, LSE,
// LSR, LS, Guaranteed and Burstable are prod, BE and BestEffort are batch.
PriorityClass PodPriorityClass(const PodInput& pod);

// The name `name` is requested under by pods of `priority`: prod and none keep it, batch and
// mid move cpu and memory to their kubernetes.io/{batch,mid}-{cpu,memory} names, and every
// other (class, name) pair has none: "" (so such pods estimate 0 for it).
std::string_view TranslateResourceName(PriorityClass priority, std::string_view name);

}  // namespace qrm::cluster::loadaware
