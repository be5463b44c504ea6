// ContainerUpdate: what the host writes into one container's CRI requests, merged from the
// allocations every resource plugin made for it.
//
// The host owns only the fields plugins claimed (oci_property_name) and the envs and
// annotations they returned; everything else in a CreateContainer / UpdateContainerResources
// request is the kubelet's and must reach the runtime untouched, so the Apply* functions
// edit requests in place instead of building new ones.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/cri_runtime_v1.pb.h"
#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/status.h"
#include "qrm/apply/oci_property.h"

namespace qrm::apply {

struct ContainerUpdate {
  ::runtime::v1::LinuxContainerResources resources;  // only owned fields are set
  std::set<OciProperty> owned;                       // which fields of `resources` qrm owns
  std::map<std::string, std::string> envs;
  std::map<std::string, std::string> annotations;
  // Human-readable env/annotation conflicts between resources, already resolved (the
  // smallest resource name wins); for logs and events, not for decisions.
  std::vector<std::string> conflicts;

  // Equal when they would write the same thing: owned set, the owned fields' values (not
  // any stray non-owned field of `resources`), envs and annotations. `conflicts` is a
  // diagnostic and does not count, so reconcile does not re-apply over a log line.
  friend bool operator==(const ContainerUpdate&, const ContainerUpdate&);
};

// A digest of what an update would write: equal for updates that are ==, and different for
// updates that are not (but for a 2^-64 chance). Lets a caller remember what a container was
// given in 8 bytes instead of the whole update (the shim keeps one per created container).
uint64_t Fingerprint(const ContainerUpdate& update);

// Merges one container's allocations (resource name -> that resource's allocation).
//
// An allocation with a non-empty oci_property_name sets that field from allocation_result
// (formats in qrm/apply/property_value.h); one with an empty name contributes only envs and
// annotations. Errors are kInvalidArgument naming the resource, property and value:
//  - unknown property name or malformed value;
//  - two resources setting one property to different values (both resources and values
//    named); the same value twice, in any spelling with the same meaning, is fine;
//  - an env or annotation the rules of qrm/apply/env_annotation_rules.h refuse (bad env
//    name, NUL, annotation key not a qualified name, value over the size limit).
// Envs and annotations with one key from several resources: the lexicographically smallest
// resource name wins, and each differing value adds a line to `conflicts`. The result
// depends only on the input's contents, never on protobuf map iteration order.
StatusOr<ContainerUpdate> BuildContainerUpdate(
    const std::map<std::string, ::resourceplugin::v1alpha1::ResourceAllocationInfo>& allocations);

}  // namespace qrm::apply
