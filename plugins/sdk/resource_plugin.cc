#include "plugins/sdk/resource_plugin.h"

#include <fmt/format.h>

namespace qrm::sdk {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

Status NotImplemented(const ResourcePlugin& plugin, const char* method) {
  return UnimplementedError(
      fmt::format("resource plugin {} does not implement {}", plugin.ResourceName(), method));
}

}  // namespace

StatusOr<pb::PodResourceHintsResponse> ResourcePlugin::GetPodTopologyHints(
    const pb::PodResourceRequest&) {
  return NotImplemented(*this, "GetPodTopologyHints");
}

StatusOr<pb::PodResourceAllocationResponse> ResourcePlugin::AllocateForPod(
    const pb::PodResourceRequest&) {
  return NotImplemented(*this, "AllocateForPod");
}

Status ResourcePlugin::PreStartContainer(const pb::PreStartContainerRequest&) {
  return Status::Ok();
}

StatusOr<pb::AssociatedDeviceHintsResponse> ResourcePlugin::GetAssociatedDeviceTopologyHints(
    const pb::AssociatedDeviceRequest&) {
  return NotImplemented(*this, "GetAssociatedDeviceTopologyHints");
}

Status ResourcePlugin::UpdateAllocatableAssociatedDevices(
    const pb::UpdateAllocatableAssociatedDevicesRequest&) {
  return NotImplemented(*this, "UpdateAllocatableAssociatedDevices");
}

StatusOr<pb::AssociatedDeviceAllocationResponse> ResourcePlugin::AllocateAssociatedDevice(
    const pb::AssociatedDeviceRequest&) {
  return NotImplemented(*this, "AllocateAssociatedDevice");
}

}  // namespace qrm::sdk
