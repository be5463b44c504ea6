// Node extended resources (docs/node-report.md, "Extended resources"): the JSON Patch that
// makes a Node's status.capacity and status.allocatable carry the extended resources qrm
// offers, as Kubernetes' "Advertise Extended Resources for a Node" does
// (PATCH /api/v1/nodes/<name>/status, Content-Type application/json-patch+json).
//
// Pure: from the Node as read, what qrm wants and what qrm published before, it builds the
// operations for the differences only: "add" for a resource the node lacks, "replace" for one
// whose quantity differs (quantities compare by amount: "1k" equals "1000"), "remove" for one
// qrm published before and offers no more. A resource qrm never published (a device plugin's
// nvidia.com/gpu, an operator's own) is never touched, and no native resource (cpu, memory,
// pods, hugepages-*: the kubelet's) is ever written or removed.
//
// Every operation sets an absolute value, so a patch computed from a read that is a little
// stale, or sent again after a lost answer, converges at the next check. No "test" operation
// guards the values read: the kubelet rewriting a resource between the read and the patch
// (reconcileExtendedResource zeroes them when it re-registers) is exactly what the patch must
// overwrite, and a test would only turn that into a 422 and a delay.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/quantity.h"
#include "common/status.h"

namespace qrm::cluster {

inline constexpr const char* kJsonPatchContentType = "application/json-patch+json";

// Kubernetes' IsExtendedResourceName (k8s.io/kubernetes/pkg/apis/core/v1/helper): a name with
// a domain prefix outside *kubernetes.io/, not starting with "requests.", and a qualified name
// once "requests." is put in front (prefix a lowercase DNS subdomain of at most 244
// characters, name 1-63 of [A-Za-z0-9._-] starting and ending alphanumeric).
bool IsExtendedResourceName(std::string_view name);
// The same as a Status: kInvalidArgument naming the resource and the rule it breaks.
Status ValidateExtendedResourceName(std::string_view name);

struct ExtendedResource {
  Quantity capacity;
  Quantity allocatable;
};
using ExtendedResources = std::map<std::string, ExtendedResource>;  // by resource name

struct ExtendedResourcePatch {
  std::string json;  // the JSON Patch document: "[]" when nothing differs
  std::vector<std::string> added, changed, removed;  // resource names, sorted
  bool empty() const { return added.empty() && changed.empty() && removed.empty(); }
};

// The patch that takes `node_json` (a v1 Node as GET returns it) to `desired`, removing what
// of `published` is no longer desired. Errors: kInvalidArgument when the node is not a JSON
// object or its status.capacity/allocatable is not an object of quantities (naming the field
// and value), or when `desired` names a resource that is not an extended resource (naming
// it). Names of `published` that are not extended resources are ignored, never removed.
StatusOr<ExtendedResourcePatch> BuildExtendedResourcePatch(const std::string& node_json,
                                                           const ExtendedResources& desired,
                                                           const std::set<std::string>& published);

}  // namespace qrm::cluster
