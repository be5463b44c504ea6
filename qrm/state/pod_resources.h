// The host's allocation state as plain values: pod -> container -> resource -> allocation,
// the same shape as the kubelet QRM's pod resources checkpoint.
//
// Allocation payloads stay protobuf messages (not a qrm-specific mirror) because they are
// what plugins return and what the runtime applier and pod-resources service consume; the
// checkpoint stores them as deterministic protobuf bytes (see README.md).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/numa_mask.h"
#include "common/protocol_keys.h"

namespace qrm::state {

struct ContainerAllocation {
  // The request admission sent: pod/container identity, quantities, labels, annotations and
  // `hint` = the merged affinity. resource_name is empty: one request covers every resource
  // of the container (StateStore::PutContainer clears it).
  ::resourceplugin::v1alpha1::ResourceRequest request;
  // By resource name ("cpu", "memory", ...).
  std::map<std::string, ::resourceplugin::v1alpha1::ResourceAllocationInfo> resources;
  // DeterministicBytes of each entry of `resources`, by the same names: a cache that
  // StateStore fills whenever it stores the container (and at Load), so that comparing a
  // stored allocation with a plugin's report (SameAsStored) and writing the pod's file do
  // not serialize the stored side again. Callers building an allocation leave it empty; the
  // store recomputes it from `resources` and ignores what it held. Not part of ==.
  std::map<std::string, std::string> resource_bytes;
};

struct PodAllocation {
  std::string uid, name, ns;
  // Set under the pod topology scope: the affinity computed once for the whole pod, which
  // later containers of the pod must reuse (also after a restart).
  std::optional<NumaMask> pod_affinity;
  // By container name.
  std::map<std::string, ContainerAllocation> containers;
};

// By pod uid. The pods are immutable once stored: StateStore replaces a pod's pointer on
// every change, so a copy of this map (StateStore::Snapshot) costs one pointer copy per pod
// and never changes under its holder.
using PodResources = std::map<std::string, std::shared_ptr<const PodAllocation>>;

// Equality as the checkpoint sees it: protobuf messages compare by their deterministic
// serialization (map order does not matter, unknown fields do). Lets callers (reconcile's
// diff, tests) compare whole states with ==. The resource_bytes cache is not compared.
bool operator==(const ContainerAllocation& a, const ContainerAllocation& b);
bool operator==(const PodAllocation& a, const PodAllocation& b);
// Pod by pod, by value (not by pointer); a null pod equals only a null pod.
bool SamePods(const PodResources& a, const PodResources& b);

// Deterministic protobuf bytes (map entries sorted by key): the same message always gives
// the same bytes, so checkpoints of equal states are byte-identical. Empty on the (only
// theoretical, > 2 GiB) serialization failure.
std::string DeterministicBytes(const google::protobuf::MessageLite& message);

// (Re)computes container.resource_bytes from container.resources.
void CacheResourceBytes(ContainerAllocation& container);

// Whether `info` equals the stored allocation of `resource` in `container` (false if there
// is none). Serializes only `info` when the stored side's bytes are cached.
bool SameAsStored(const ContainerAllocation& container, const std::string& resource,
                  const ::resourceplugin::v1alpha1::ResourceAllocationInfo& info);

}  // namespace qrm::state
