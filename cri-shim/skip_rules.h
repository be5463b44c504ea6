// Skip rules: pods the shim passes through untouched (never admitted, requests never edited).
#pragma once

#include <set>
#include <string>

#include "common/status.h"
#include "cri-shim/pod_info.h"

namespace qrm::shim {

// True if the pod's namespace is in `skip_namespaces`, or its annotation qrm.io/skip is
// "true". Any value of qrm.io/skip other than "true" or "false" is kInvalidArgument naming
// the annotation and the value (a typo must not silently opt a pod in or out).
StatusOr<bool> ShouldSkip(const PodInfo& pod, const std::set<std::string>& skip_namespaces);

}  // namespace qrm::shim
