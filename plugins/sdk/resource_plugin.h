// The interface a resource plugin author implements.
//
// A plugin is a process that owns one resource (e.g. "cpu") on a node. It
// implements ResourcePlugin and hands it to qrm::sdk::Run (run.h), which serves
// it as `resourceplugin.v1alpha1.ResourcePlugin` on a Unix socket and registers
// it with the host. Every method is called concurrently from gRPC threads: the
// implementation protects its own state.
//
// Return a non-OK Status to fail an RPC; its code and message reach the host
// unchanged (use kInvalidArgument with the offending field and value for bad
// requests, kResourceExhausted when the request does not fit).
#pragma once

#include <string>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/status.h"

namespace qrm::sdk {

class ResourcePlugin {
 public:
  virtual ~ResourcePlugin() = default;

  // The resource this plugin serves ("cpu", "memory", "example.com/accel").
  virtual std::string ResourceName() const = 0;
  // Sent with registration and returned by GetResourcePluginOptions.
  virtual ::resourceplugin::v1alpha1::ResourcePluginOptions Options() const = 0;

  // --- Admission -----------------------------------------------------------
  // NUMA hints for one container. In the response's resource_hints map, an
  // absent resource means "no preference" and an empty hint list means "cannot
  // be satisfied".
  virtual StatusOr<::resourceplugin::v1alpha1::ResourceHintsResponse> GetTopologyHints(
      const ::resourceplugin::v1alpha1::ResourceRequest& req) = 0;
  // Allocates for one container; req.hint carries the merged NUMA affinity.
  // Must be idempotent for a (pod, container) it already holds.
  virtual StatusOr<::resourceplugin::v1alpha1::ResourceAllocationResponse> Allocate(
      const ::resourceplugin::v1alpha1::ResourceRequest& req) = 0;
  // Pod-scope variants; the defaults answer kUnimplemented.
  virtual StatusOr<::resourceplugin::v1alpha1::PodResourceHintsResponse> GetPodTopologyHints(
      const ::resourceplugin::v1alpha1::PodResourceRequest& req);
  virtual StatusOr<::resourceplugin::v1alpha1::PodResourceAllocationResponse> AllocateForPod(
      const ::resourceplugin::v1alpha1::PodResourceRequest& req);
  // Called before a container starts when Options().pre_start_required.
  virtual Status PreStartContainer(const ::resourceplugin::v1alpha1::PreStartContainerRequest& req);

  // --- Lifecycle and state ---------------------------------------------------
  // Releases everything the pod holds. Removing an unknown pod succeeds.
  virtual Status RemovePod(const std::string& pod_uid) = 0;
  // Current allocation of every container; the host reconciles against it when
  // Options().need_reconcile.
  virtual StatusOr<::resourceplugin::v1alpha1::GetResourcesAllocationResponse>
  GetResourcesAllocation() = 0;
  virtual StatusOr<::resourceplugin::v1alpha1::GetTopologyAwareResourcesResponse>
  GetTopologyAwareResources(
      const ::resourceplugin::v1alpha1::GetTopologyAwareResourcesRequest& req) = 0;
  virtual StatusOr<::resourceplugin::v1alpha1::GetTopologyAwareAllocatableResourcesResponse>
  GetTopologyAwareAllocatableResources() = 0;
  // Called by sdk::Run once the plugin serves no more calls, before the process exits: a
  // plugin with a ledger writes its last snapshot here (pod_ledger.h). An error is logged and
  // changes nothing else (the journal already holds every change).
  virtual Status OnStop() { return Status::Ok(); }

  // --- Associated devices (optional; defaults answer kUnimplemented) ---------
  virtual StatusOr<::resourceplugin::v1alpha1::AssociatedDeviceHintsResponse>
  GetAssociatedDeviceTopologyHints(const ::resourceplugin::v1alpha1::AssociatedDeviceRequest& req);
  virtual Status UpdateAllocatableAssociatedDevices(
      const ::resourceplugin::v1alpha1::UpdateAllocatableAssociatedDevicesRequest& req);
  virtual StatusOr<::resourceplugin::v1alpha1::AssociatedDeviceAllocationResponse>
  AllocateAssociatedDevice(const ::resourceplugin::v1alpha1::AssociatedDeviceRequest& req);
};

}  // namespace qrm::sdk
