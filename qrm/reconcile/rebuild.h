// Rebuild: finds where the host checkpoint and the plugins disagree about WHICH containers
// hold a resource (the reconcile diff handles containers both know, with different values).
//
//  * Unrecorded: a plugin reports an allocation for a container the checkpoint does not
//    have: the host lost it (a corrupt pod file moved aside, or a kill between the plugins'
//    Allocate and the host's own write). The reconcile loop adopts it if the runtime lists
//    the container, and releases the pod on the plugins if the runtime has no such pod.
//  * Lost: the checkpoint holds a container's allocation of resource R, but R's plugin
//    (whose report succeeded) does not: the plugin lost its state (its checkpoint was
//    moved aside). The reconcile loop replays Allocate with the stored request and
//    kPreviousAllocationAnnotation, so the plugin can give the same resources back.
//  * Skipped: the checkpoint holds a container admitted without resource R (its plugin
//    was down or hung and the QoS level's failure policy is "ignore"; admission lists R
//    in kSkippedResourcesAnnotation), R's plugin answers again and does not hold it: the reconcile
//    loop sends the Allocate the admission skipped, so the container stops running outside R's
//    plugin's accounting (e.g. a shared container on a dedicated container's CPU).
//  * Held skipped: the same, but R's plugin does hold it: its Allocate answered after the
//    host's deadline (a late answer). The reconcile loop adopts that allocation into the
//    checkpoint and takes R off the container's kSkippedResourcesAnnotation.
//
// Pure functions over one tick's inputs, so they are unit-tested without plugins.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/protocol_keys.h"
#include "qrm/state/pod_resources.h"

namespace qrm::reconcile {

// One plugin's successful GetResourcesAllocation answer.
struct PluginReport {
  std::string resource;  // the resource the plugin serves
  const ::resourceplugin::v1alpha1::GetResourcesAllocationResponse* response = nullptr;
};

struct UnrecordedContainer {
  std::string pod_uid, container;
  // By resource: what each plugin reported for it.
  std::map<std::string, ::resourceplugin::v1alpha1::ResourceAllocationInfo> resources;
};

struct LostAllocation {
  std::string pod_uid, container, resource;
  bool skipped = false;  // never allocated (FindSkipped), rather than lost by the plugin
};

// Containers some plugin allocated its own resource to and `stored` lacks (the pod, or
// the container in a known pod), in (uid, container) order. A plugin's entries for other
// resources than its own are ignored, as in the reconcile diff.
std::vector<UnrecordedContainer> FindUnrecorded(const state::PodResources& stored,
                                                const std::vector<PluginReport>& reports);

// Stored (container, resource) pairs whose resource's plugin answered without them, in
// (uid, container, resource) order. Resources without a report (plugin down, failed, or
// not reconciling) are never reported lost.
std::vector<LostAllocation> FindLost(const state::PodResources& stored,
                                     const std::vector<PluginReport>& reports);

// Stored containers admitted without resource R (R listed in their request's
// kSkippedResourcesAnnotation, which admission sets) that still hold no allocation of R,
// where R's plugin answered and holds none for them either, in (uid, container, resource)
// order. (Whether a container requested R cannot tell: plugins may answer a request with
// no allocation, e.g. the NIC plugin for a pod that wants no NIC.)
std::vector<LostAllocation> FindSkipped(const state::PodResources& stored,
                                        const std::vector<PluginReport>& reports);

// Stored containers admitted without resource R (as FindSkipped) that R's plugin reports
// holding: an Allocate that answered after the host's deadline. In (uid, container, resource)
// order, each with the plugin's allocation.
struct HeldSkipped {
  std::string pod_uid, container, resource;
  ::resourceplugin::v1alpha1::ResourceAllocationInfo info;
};
std::vector<HeldSkipped> FindHeldSkipped(const state::PodResources& stored,
                                         const std::vector<PluginReport>& reports);

// `request` with `resource` taken off its kSkippedResourcesAnnotation (the annotation is
// dropped when nothing is left in it).
::resourceplugin::v1alpha1::ResourceRequest WithoutSkipped(
    ::resourceplugin::v1alpha1::ResourceRequest request, const std::string& resource);

// The Allocate request that gives `resource` back to a stored container: its stored
// request, resource_name set, and kPreviousAllocationAnnotation = the stored
// allocation_result (absent if nothing is stored for the resource).
::resourceplugin::v1alpha1::ResourceRequest ReplayRequest(const state::ContainerAllocation& stored,
                                                          const std::string& resource);

// The checkpoint entry for an adopted container: a request synthesized from the runtime's
// identity (quantities = the plugins' allocated quantities, kAdoptedAnnotation "true") and
// the reported allocations.
state::ContainerAllocation AdoptedAllocation(const UnrecordedContainer& found,
                                             const std::string& pod_name,
                                             const std::string& pod_namespace);

}  // namespace qrm::reconcile
