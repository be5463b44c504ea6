#include "cri-shim/request_edit.h"

namespace qrm::shim {

bool HasEffect(const host::ContainerUpdate& update) {
  return !update.owned.empty() || !update.envs.empty() || !update.annotations.empty();
}

void ApplyToCreateContainer(const host::ContainerUpdate& update,
                            ::runtime::v1::CreateContainerRequest* request) {
  ::runtime::v1::ContainerConfig* config = request->mutable_config();
  if (!update.owned.empty()) {
    host::ApplyOwnedFields(update, config->mutable_linux()->mutable_resources());
  }
  host::ApplyEnvsAndAnnotations(update, config);
}

void ApplyToUpdateContainerResources(const host::ContainerUpdate& update,
                                     ::runtime::v1::UpdateContainerResourcesRequest* request) {
  if (update.owned.empty()) return;
  host::ApplyOwnedFields(update, request->mutable_linux());
}

::runtime::v1::UpdateContainerResourcesRequest UpdateRequestFor(
    const std::string& container_id, const host::ContainerUpdate& update) {
  ::runtime::v1::UpdateContainerResourcesRequest request;
  request.set_container_id(container_id);
  host::ApplyOwnedFields(update, request.mutable_linux());
  for (const auto& [key, value] : update.annotations) (*request.mutable_annotations())[key] = value;
  return request;
}

}  // namespace qrm::shim
