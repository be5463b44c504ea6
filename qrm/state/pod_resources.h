// The host's allocation state as plain values: pod -> container -> resource -> allocation,
// the same shape as the kubelet QRM's pod resources checkpoint.
//
// Allocation payloads stay protobuf messages (not a qrm-specific mirror) because they are
// what plugins return and what the runtime applier and pod-resources service consume; the
// checkpoint stores them as deterministic protobuf bytes (see README.md).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/numa_mask.h"

namespace qrm::host {

namespace pb = ::resourceplugin::v1alpha1;

struct ContainerAllocation {
  // The request admission sent: pod/container identity, quantities, labels, annotations and
  // `hint` = the merged affinity. resource_name is empty: one request covers every resource
  // of the container (StateStore::PutContainer clears it).
  pb::ResourceRequest request;
  // By resource name ("cpu", "memory", ...).
  std::map<std::string, pb::ResourceAllocationInfo> resources;
};

struct PodAllocation {
  std::string uid, name, ns;
  // Set under the pod topology scope: the affinity computed once for the whole pod, which
  // later containers of the pod must reuse (also after a restart).
  std::optional<NumaMask> pod_affinity;
  // By container name.
  std::map<std::string, ContainerAllocation> containers;
};

// By pod uid.
using PodResources = std::map<std::string, PodAllocation>;

// Equality as the checkpoint sees it: protobuf messages compare by their deterministic
// serialization (map order does not matter, unknown fields do). Lets callers (reconcile's
// diff, tests) compare whole states with ==.
bool operator==(const ContainerAllocation& a, const ContainerAllocation& b);
bool operator==(const PodAllocation& a, const PodAllocation& b);

// Deterministic protobuf bytes (map entries sorted by key): the same message always gives
// the same bytes, so checkpoints of equal states are byte-identical. Empty on the (only
// theoretical, > 2 GiB) serialization failure.
std::string DeterministicBytes(const google::protobuf::MessageLite& message);

}  // namespace qrm::host
