#include "plugins/sdk/grpc_services.h"

#include "common/grpc_status.h"
#include "common/log.h"
#include "common/metrics/metrics.h"
#include "plugins/sdk/plugin_server.h"

namespace qrm::sdk::internal {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

// Copies a StatusOr's value into the response or returns its error.
template <typename T>
grpc::Status Reply(StatusOr<T> result, T* resp) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *resp = std::move(result).value();
  return grpc::Status::OK;
}

// Runs one served call and records its latency and, on failure, its status code: every
// plugin built on the SDK reports the same metrics on its /metrics endpoint.
template <typename Fn>
grpc::Status Measured(const char* method, Fn&& fn) {
  metrics::Stopwatch watch;
  grpc::Status status = fn();
  auto& m = metrics::Default();
  m.GetHistogram("qrm_plugin_served_duration_seconds",
                 "Latency of the calls this plugin served, by method.", {{"method", method}})
      .Observe(watch.Seconds());
  if (!status.ok()) {
    m.GetCounter(
         "qrm_plugin_served_errors_total",
         "Calls this plugin answered with an error, by method and status code.",
         {{"method", method},
          {"code", std::string(StatusCodeName(static_cast<StatusCode>(status.error_code())))}})
        .Inc();
  }
  return status;
}

}  // namespace

grpc::Status ResourcePluginService::GetTopologyHints(grpc::ServerContext*,
                                                     const pb::ResourceRequest* req,
                                                     pb::ResourceHintsResponse* resp) {
  return Measured("GetTopologyHints", [&] { return Reply(plugin_.GetTopologyHints(*req), resp); });
}

grpc::Status ResourcePluginService::GetPodTopologyHints(grpc::ServerContext*,
                                                        const pb::PodResourceRequest* req,
                                                        pb::PodResourceHintsResponse* resp) {
  return Measured("GetPodTopologyHints",
                  [&] { return Reply(plugin_.GetPodTopologyHints(*req), resp); });
}

grpc::Status ResourcePluginService::RemovePod(grpc::ServerContext*, const pb::RemovePodRequest* req,
                                              pb::RemovePodResponse*) {
  return Measured("RemovePod", [&] { return ToGrpcStatus(plugin_.RemovePod(req->pod_uid())); });
}

grpc::Status ResourcePluginService::GetResourcesAllocation(
    grpc::ServerContext*, const pb::GetResourcesAllocationRequest*,
    pb::GetResourcesAllocationResponse* resp) {
  return Measured("GetResourcesAllocation",
                  [&] { return Reply(plugin_.GetResourcesAllocation(), resp); });
}

grpc::Status ResourcePluginService::GetTopologyAwareResources(
    grpc::ServerContext*, const pb::GetTopologyAwareResourcesRequest* req,
    pb::GetTopologyAwareResourcesResponse* resp) {
  return Measured("GetTopologyAwareResources",
                  [&] { return Reply(plugin_.GetTopologyAwareResources(*req), resp); });
}

grpc::Status ResourcePluginService::GetTopologyAwareAllocatableResources(
    grpc::ServerContext*, const pb::GetTopologyAwareAllocatableResourcesRequest*,
    pb::GetTopologyAwareAllocatableResourcesResponse* resp) {
  return Measured("GetTopologyAwareAllocatableResources",
                  [&] { return Reply(plugin_.GetTopologyAwareAllocatableResources(), resp); });
}

grpc::Status ResourcePluginService::GetResourcePluginOptions(grpc::ServerContext*, const pb::Empty*,
                                                             pb::ResourcePluginOptions* resp) {
  *resp = plugin_.Options();
  return grpc::Status::OK;
}

grpc::Status ResourcePluginService::Allocate(grpc::ServerContext*, const pb::ResourceRequest* req,
                                             pb::ResourceAllocationResponse* resp) {
  return Measured("Allocate", [&] { return Reply(plugin_.Allocate(*req), resp); });
}

grpc::Status ResourcePluginService::AllocateForPod(grpc::ServerContext*,
                                                   const pb::PodResourceRequest* req,
                                                   pb::PodResourceAllocationResponse* resp) {
  return Measured("AllocateForPod", [&] { return Reply(plugin_.AllocateForPod(*req), resp); });
}

grpc::Status ResourcePluginService::PreStartContainer(grpc::ServerContext*,
                                                      const pb::PreStartContainerRequest* req,
                                                      pb::PreStartContainerResponse*) {
  return Measured("PreStartContainer",
                  [&] { return ToGrpcStatus(plugin_.PreStartContainer(*req)); });
}

grpc::Status ResourcePluginService::GetAssociatedDeviceTopologyHints(
    grpc::ServerContext*, const pb::AssociatedDeviceRequest* req,
    pb::AssociatedDeviceHintsResponse* resp) {
  return Measured("GetAssociatedDeviceTopologyHints",
                  [&] { return Reply(plugin_.GetAssociatedDeviceTopologyHints(*req), resp); });
}

grpc::Status ResourcePluginService::UpdateAllocatableAssociatedDevices(
    grpc::ServerContext*, const pb::UpdateAllocatableAssociatedDevicesRequest* req,
    pb::UpdateAllocatableAssociatedDevicesResponse*) {
  return Measured("UpdateAllocatableAssociatedDevices",
                  [&] { return ToGrpcStatus(plugin_.UpdateAllocatableAssociatedDevices(*req)); });
}

grpc::Status ResourcePluginService::AllocateAssociatedDevice(
    grpc::ServerContext*, const pb::AssociatedDeviceRequest* req,
    pb::AssociatedDeviceAllocationResponse* resp) {
  return Measured("AllocateAssociatedDevice",
                  [&] { return Reply(plugin_.AllocateAssociatedDevice(*req), resp); });
}

grpc::Status WatcherRegistrationService::GetInfo(grpc::ServerContext*,
                                                 const ::pluginregistration::InfoRequest*,
                                                 ::pluginregistration::PluginInfo* info) {
  info->set_type(kWatcherPluginType);
  info->set_name(resource_name_);
  // The ResourcePlugin service is served on this same socket.
  info->set_endpoint(socket_path_);
  info->add_supported_versions(kVersion);
  return grpc::Status::OK;
}

grpc::Status WatcherRegistrationService::NotifyRegistrationStatus(
    grpc::ServerContext*, const ::pluginregistration::RegistrationStatus* status,
    ::pluginregistration::RegistrationStatusResponse*) {
  registered_ = status->plugin_registered();
  auto log = Logger("sdk");
  if (status->plugin_registered()) {
    log->info("resource={}: host confirmed watcher-style registration", resource_name_);
  } else {
    log->error("resource={}: host refused registration: {}", resource_name_, status->error());
  }
  return grpc::Status::OK;
}

}  // namespace qrm::sdk::internal
