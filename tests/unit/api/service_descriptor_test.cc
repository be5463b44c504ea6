// Checks that every method of every service exists in the generated descriptors with the
// gRPC path, request/response types and streaming flags of the public definitions. The
// expected lists are written out from the public .proto files, not derived from ours.

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <google/protobuf/descriptor.h>

#include "api/cri_runtime_v1.pb.h"
#include "api/pluginregistration_v1.pb.h"
#include "api/podresources_v1.pb.h"
#include "api/resourceplugin_v1alpha1.pb.h"

namespace {

struct Method {
  std::string name;
  std::string input;   // unqualified, same package as the service
  std::string output;  // unqualified, same package as the service
  bool server_streaming = false;
};

void CheckService(const google::protobuf::FileDescriptor* file, const std::string& package,
                  const std::string& service_name, const std::vector<Method>& expected) {
  INFO("service " << package << "." << service_name);
  REQUIRE(file->package() == package);
  const auto* service = file->FindServiceByName(service_name);
  REQUIRE(service != nullptr);
  CHECK(service->full_name() == package + "." + service_name);
  CHECK(service->method_count() == static_cast<int>(expected.size()));
  for (const auto& m : expected) {
    INFO("method " << m.name);
    const auto* method = service->FindMethodByName(m.name);
    REQUIRE(method != nullptr);
    // gRPC path as it appears on the wire (HTTP/2 :path).
    CHECK("/" + method->service()->full_name() + "/" + method->name() ==
          "/" + package + "." + service_name + "/" + m.name);
    CHECK(method->input_type()->full_name() == package + "." + m.input);
    CHECK(method->output_type()->full_name() == package + "." + m.output);
    CHECK_FALSE(method->client_streaming());
    CHECK(method->server_streaming() == m.server_streaming);
  }
}

}  // namespace

TEST_CASE("CRI RuntimeService and ImageService methods", "[api][cri][descriptor]") {
  const auto* file = runtime::v1::VersionRequest::descriptor()->file();
  CheckService(
      file, "runtime.v1", "RuntimeService",
      {
          {"Version", "VersionRequest", "VersionResponse"},
          {"RunPodSandbox", "RunPodSandboxRequest", "RunPodSandboxResponse"},
          {"StopPodSandbox", "StopPodSandboxRequest", "StopPodSandboxResponse"},
          {"RemovePodSandbox", "RemovePodSandboxRequest", "RemovePodSandboxResponse"},
          {"PodSandboxStatus", "PodSandboxStatusRequest", "PodSandboxStatusResponse"},
          {"ListPodSandbox", "ListPodSandboxRequest", "ListPodSandboxResponse"},
          {"StreamPodSandboxes", "StreamPodSandboxesRequest", "StreamPodSandboxesResponse", true},
          {"CreateContainer", "CreateContainerRequest", "CreateContainerResponse"},
          {"StartContainer", "StartContainerRequest", "StartContainerResponse"},
          {"StopContainer", "StopContainerRequest", "StopContainerResponse"},
          {"RemoveContainer", "RemoveContainerRequest", "RemoveContainerResponse"},
          {"ListContainers", "ListContainersRequest", "ListContainersResponse"},
          {"StreamContainers", "StreamContainersRequest", "StreamContainersResponse", true},
          {"ContainerStatus", "ContainerStatusRequest", "ContainerStatusResponse"},
          {"UpdateContainerResources", "UpdateContainerResourcesRequest",
           "UpdateContainerResourcesResponse"},
          {"ReopenContainerLog", "ReopenContainerLogRequest", "ReopenContainerLogResponse"},
          {"ExecSync", "ExecSyncRequest", "ExecSyncResponse"},
          {"Exec", "ExecRequest", "ExecResponse"},
          {"Attach", "AttachRequest", "AttachResponse"},
          {"PortForward", "PortForwardRequest", "PortForwardResponse"},
          {"ContainerStats", "ContainerStatsRequest", "ContainerStatsResponse"},
          {"ListContainerStats", "ListContainerStatsRequest", "ListContainerStatsResponse"},
          {"StreamContainerStats", "StreamContainerStatsRequest", "StreamContainerStatsResponse",
           true},
          {"PodSandboxStats", "PodSandboxStatsRequest", "PodSandboxStatsResponse"},
          {"ListPodSandboxStats", "ListPodSandboxStatsRequest", "ListPodSandboxStatsResponse"},
          {"StreamPodSandboxStats", "StreamPodSandboxStatsRequest", "StreamPodSandboxStatsResponse",
           true},
          {"UpdateRuntimeConfig", "UpdateRuntimeConfigRequest", "UpdateRuntimeConfigResponse"},
          {"Status", "StatusRequest", "StatusResponse"},
          {"CheckpointContainer", "CheckpointContainerRequest", "CheckpointContainerResponse"},
          {"CheckpointPod", "CheckpointPodRequest", "CheckpointPodResponse"},
          {"RestorePod", "RestorePodRequest", "RestorePodResponse"},
          {"GetContainerEvents", "GetEventsRequest", "ContainerEventResponse", true},
          {"ListMetricDescriptors", "ListMetricDescriptorsRequest",
           "ListMetricDescriptorsResponse"},
          {"ListPodSandboxMetrics", "ListPodSandboxMetricsRequest",
           "ListPodSandboxMetricsResponse"},
          {"StreamPodSandboxMetrics", "StreamPodSandboxMetricsRequest",
           "StreamPodSandboxMetricsResponse", true},
          {"RuntimeConfig", "RuntimeConfigRequest", "RuntimeConfigResponse"},
          {"UpdatePodSandboxResources", "UpdatePodSandboxResourcesRequest",
           "UpdatePodSandboxResourcesResponse"},
      });
  CheckService(file, "runtime.v1", "ImageService",
               {
                   {"ListImages", "ListImagesRequest", "ListImagesResponse"},
                   {"StreamImages", "StreamImagesRequest", "StreamImagesResponse", true},
                   {"ImageStatus", "ImageStatusRequest", "ImageStatusResponse"},
                   {"PullImage", "PullImageRequest", "PullImageResponse"},
                   {"RemoveImage", "RemoveImageRequest", "RemoveImageResponse"},
                   {"ImageFsInfo", "ImageFsInfoRequest", "ImageFsInfoResponse"},
               });
  CHECK(file->service_count() == 2);
}

TEST_CASE("resourceplugin Registration and ResourcePlugin methods",
          "[api][resourceplugin][descriptor]") {
  const auto* file = resourceplugin::v1alpha1::Empty::descriptor()->file();
  CheckService(file, "resourceplugin.v1alpha1", "Registration",
               {{"Register", "RegisterRequest", "Empty"}});
  CheckService(
      file, "resourceplugin.v1alpha1", "ResourcePlugin",
      {
          {"GetTopologyHints", "ResourceRequest", "ResourceHintsResponse"},
          {"GetPodTopologyHints", "PodResourceRequest", "PodResourceHintsResponse"},
          {"RemovePod", "RemovePodRequest", "RemovePodResponse"},
          {"GetResourcesAllocation", "GetResourcesAllocationRequest",
           "GetResourcesAllocationResponse"},
          {"GetTopologyAwareResources", "GetTopologyAwareResourcesRequest",
           "GetTopologyAwareResourcesResponse"},
          {"GetTopologyAwareAllocatableResources", "GetTopologyAwareAllocatableResourcesRequest",
           "GetTopologyAwareAllocatableResourcesResponse"},
          {"GetResourcePluginOptions", "Empty", "ResourcePluginOptions"},
          {"Allocate", "ResourceRequest", "ResourceAllocationResponse"},
          {"AllocateForPod", "PodResourceRequest", "PodResourceAllocationResponse"},
          {"PreStartContainer", "PreStartContainerRequest", "PreStartContainerResponse"},
          {"GetAssociatedDeviceTopologyHints", "AssociatedDeviceRequest",
           "AssociatedDeviceHintsResponse"},
          {"UpdateAllocatableAssociatedDevices", "UpdateAllocatableAssociatedDevicesRequest",
           "UpdateAllocatableAssociatedDevicesResponse"},
          {"AllocateAssociatedDevice", "AssociatedDeviceRequest",
           "AssociatedDeviceAllocationResponse"},
      });
  CHECK(file->service_count() == 2);
}

TEST_CASE("pluginregistration Registration methods", "[api][pluginregistration][descriptor]") {
  const auto* file = pluginregistration::PluginInfo::descriptor()->file();
  CheckService(file, "pluginregistration", "Registration",
               {
                   {"GetInfo", "InfoRequest", "PluginInfo"},
                   {"NotifyRegistrationStatus", "RegistrationStatus", "RegistrationStatusResponse"},
               });
  CHECK(file->service_count() == 1);
}

TEST_CASE("podresources PodResourcesLister methods", "[api][podresources][descriptor]") {
  const auto* file = v1::ListPodResourcesRequest::descriptor()->file();
  CheckService(file, "v1", "PodResourcesLister",
               {
                   {"List", "ListPodResourcesRequest", "ListPodResourcesResponse"},
                   {"GetAllocatableResources", "AllocatableResourcesRequest",
                    "AllocatableResourcesResponse"},
                   {"Get", "GetPodResourcesRequest", "GetPodResourcesResponse"},
               });
  CHECK(file->service_count() == 1);
}

TEST_CASE("generated descriptors are in the generated pool", "[api][descriptor]") {
  // Servers registered through gRPC reflection or generic handlers look names up here.
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  // Touch each file so its static registration is linked in.
  (void)runtime::v1::VersionRequest::descriptor();
  (void)resourceplugin::v1alpha1::Empty::descriptor();
  (void)pluginregistration::PluginInfo::descriptor();
  (void)v1::ListPodResourcesRequest::descriptor();
  for (const char* name :
       {"runtime.v1.RuntimeService", "runtime.v1.ImageService",
        "resourceplugin.v1alpha1.Registration", "resourceplugin.v1alpha1.ResourcePlugin",
        "pluginregistration.Registration", "v1.PodResourcesLister"}) {
    INFO(name);
    CHECK(pool->FindServiceByName(name) != nullptr);
  }
  const auto* create = pool->FindMethodByName("runtime.v1.RuntimeService.CreateContainer");
  REQUIRE(create != nullptr);
  CHECK("/" + create->service()->full_name() + "/" + create->name() ==
        "/runtime.v1.RuntimeService/CreateContainer");
}
