// gRPC adapters between the wire services and a ResourcePlugin (internal).
#pragma once

#include <atomic>

#include "api/pluginregistration_v1.grpc.pb.h"
#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "plugins/sdk/resource_plugin.h"

namespace qrm::sdk::internal {

namespace pb = ::resourceplugin::v1alpha1;  // internal header: not installed

// resourceplugin.v1alpha1.ResourcePlugin, forwarding to the author's plugin.
class ResourcePluginService final : public pb::ResourcePlugin::Service {
 public:
  explicit ResourcePluginService(sdk::ResourcePlugin& plugin) : plugin_(plugin) {}

  grpc::Status GetTopologyHints(grpc::ServerContext*, const pb::ResourceRequest* req,
                                pb::ResourceHintsResponse* resp) override;
  grpc::Status GetPodTopologyHints(grpc::ServerContext*, const pb::PodResourceRequest* req,
                                   pb::PodResourceHintsResponse* resp) override;
  grpc::Status RemovePod(grpc::ServerContext*, const pb::RemovePodRequest* req,
                         pb::RemovePodResponse* resp) override;
  grpc::Status GetResourcesAllocation(grpc::ServerContext*,
                                      const pb::GetResourcesAllocationRequest*,
                                      pb::GetResourcesAllocationResponse* resp) override;
  grpc::Status GetTopologyAwareResources(grpc::ServerContext*,
                                         const pb::GetTopologyAwareResourcesRequest* req,
                                         pb::GetTopologyAwareResourcesResponse* resp) override;
  grpc::Status GetTopologyAwareAllocatableResources(
      grpc::ServerContext*, const pb::GetTopologyAwareAllocatableResourcesRequest*,
      pb::GetTopologyAwareAllocatableResourcesResponse* resp) override;
  grpc::Status GetResourcePluginOptions(grpc::ServerContext*, const pb::Empty*,
                                        pb::ResourcePluginOptions* resp) override;
  grpc::Status Allocate(grpc::ServerContext*, const pb::ResourceRequest* req,
                        pb::ResourceAllocationResponse* resp) override;
  grpc::Status AllocateForPod(grpc::ServerContext*, const pb::PodResourceRequest* req,
                              pb::PodResourceAllocationResponse* resp) override;
  grpc::Status PreStartContainer(grpc::ServerContext*, const pb::PreStartContainerRequest* req,
                                 pb::PreStartContainerResponse* resp) override;
  grpc::Status GetAssociatedDeviceTopologyHints(grpc::ServerContext*,
                                                const pb::AssociatedDeviceRequest* req,
                                                pb::AssociatedDeviceHintsResponse* resp) override;
  grpc::Status UpdateAllocatableAssociatedDevices(
      grpc::ServerContext*, const pb::UpdateAllocatableAssociatedDevicesRequest* req,
      pb::UpdateAllocatableAssociatedDevicesResponse* resp) override;
  grpc::Status AllocateAssociatedDevice(grpc::ServerContext*,
                                        const pb::AssociatedDeviceRequest* req,
                                        pb::AssociatedDeviceAllocationResponse* resp) override;

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
