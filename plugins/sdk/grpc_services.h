// gRPC adapters between the wire services and a ResourcePlugin (internal).
#pragma once

#include <atomic>

#include "api/pluginregistration_v1.grpc.pb.h"
#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "plugins/sdk/resource_plugin.h"

namespace qrm::sdk::internal {

// resourceplugin.v1alpha1.ResourcePlugin, forwarding to the author's plugin.
class ResourcePluginService final : public ::resourceplugin::v1alpha1::ResourcePlugin::Service {
 public:
  explicit ResourcePluginService(sdk::ResourcePlugin& plugin) : plugin_(plugin) {}

  grpc::Status GetTopologyHints(grpc::ServerContext*,
                                const ::resourceplugin::v1alpha1::ResourceRequest* req,
                                ::resourceplugin::v1alpha1::ResourceHintsResponse* resp) override;
  grpc::Status GetPodTopologyHints(
      grpc::ServerContext*, const ::resourceplugin::v1alpha1::PodResourceRequest* req,
      ::resourceplugin::v1alpha1::PodResourceHintsResponse* resp) override;
  grpc::Status RemovePod(grpc::ServerContext*,
                         const ::resourceplugin::v1alpha1::RemovePodRequest* req,
                         ::resourceplugin::v1alpha1::RemovePodResponse* resp) override;
  grpc::Status GetResourcesAllocation(
      grpc::ServerContext*, const ::resourceplugin::v1alpha1::GetResourcesAllocationRequest*,
      ::resourceplugin::v1alpha1::GetResourcesAllocationResponse* resp) override;
  grpc::Status GetTopologyAwareResources(
      grpc::ServerContext*, const ::resourceplugin::v1alpha1::GetTopologyAwareResourcesRequest* req,
      ::resourceplugin::v1alpha1::GetTopologyAwareResourcesResponse* resp) override;
  grpc::Status GetTopologyAwareAllocatableResources(
      grpc::ServerContext*,
      const ::resourceplugin::v1alpha1::GetTopologyAwareAllocatableResourcesRequest*,
      ::resourceplugin::v1alpha1::GetTopologyAwareAllocatableResourcesResponse* resp) override;
  grpc::Status GetResourcePluginOptions(
      grpc::ServerContext*, const ::resourceplugin::v1alpha1::Empty*,
      ::resourceplugin::v1alpha1::ResourcePluginOptions* resp) override;
  grpc::Status Allocate(grpc::ServerContext*,
                        const ::resourceplugin::v1alpha1::ResourceRequest* req,
                        ::resourceplugin::v1alpha1::ResourceAllocationResponse* resp) override;
  grpc::Status AllocateForPod(
      grpc::ServerContext*, const ::resourceplugin::v1alpha1::PodResourceRequest* req,
      ::resourceplugin::v1alpha1::PodResourceAllocationResponse* resp) override;
  grpc::Status PreStartContainer(
      grpc::ServerContext*, const ::resourceplugin::v1alpha1::PreStartContainerRequest* req,
      ::resourceplugin::v1alpha1::PreStartContainerResponse* resp) override;
  grpc::Status GetAssociatedDeviceTopologyHints(
      grpc::ServerContext*, const ::resourceplugin::v1alpha1::AssociatedDeviceRequest* req,
      ::resourceplugin::v1alpha1::AssociatedDeviceHintsResponse* resp) override;
  grpc::Status UpdateAllocatableAssociatedDevices(
      grpc::ServerContext*,
      const ::resourceplugin::v1alpha1::UpdateAllocatableAssociatedDevicesRequest* req,
      ::resourceplugin::v1alpha1::UpdateAllocatableAssociatedDevicesResponse* resp) override;
  grpc::Status AllocateAssociatedDevice(
      grpc::ServerContext*, const ::resourceplugin::v1alpha1::AssociatedDeviceRequest* req,
      ::resourceplugin::v1alpha1::AssociatedDeviceAllocationResponse* resp) override;

 private:
  sdk::ResourcePlugin& plugin_;
};

// pluginregistration.Registration, for hosts that discover plugins by watching
// the plugin directory.
class WatcherRegistrationService final : public ::pluginregistration::Registration::Service {
 public:
  WatcherRegistrationService(std::string resource_name, std::string socket_path)
      : resource_name_(std::move(resource_name)), socket_path_(std::move(socket_path)) {}

  grpc::Status GetInfo(grpc::ServerContext*, const ::pluginregistration::InfoRequest*,
                       ::pluginregistration::PluginInfo* info) override;
  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*,
                                        const ::pluginregistration::RegistrationStatus* status,
                                        ::pluginregistration::RegistrationStatusResponse*) override;

  bool registered() const { return registered_.load(); }

 private:
  std::string resource_name_;
  std::string socket_path_;
  std::atomic<bool> registered_{false};
};

}  // namespace qrm::sdk::internal
