#include "qrm/apply/cri_request_edit.h"

#include "qrm/apply/property_value.h"

namespace qrm::apply {

void ApplyOwnedFields(const ContainerUpdate& update,
                      ::runtime::v1::LinuxContainerResources* target) {
  for (OciProperty p : update.owned) ApplyOwnedField(p, update.resources, target);
}

void ApplyEnvsAndAnnotations(const ContainerUpdate& update,
                             ::runtime::v1::ContainerConfig* config) {
  for (const auto& [key, value] : update.envs) {
    bool found = false;
    // Every entry with the key is overwritten: runtimes disagree on which duplicate wins.
    for (::runtime::v1::KeyValue& kv : *config->mutable_envs()) {
      if (kv.key() == key) {
        kv.set_value(value);
        found = true;
      }
    }
    if (!found) {
      ::runtime::v1::KeyValue* kv = config->add_envs();
      kv->set_key(key);
      kv->set_value(value);
    }
  }
  for (const auto& [key, value] : update.annotations) {
    (*config->mutable_annotations())[key] = value;
  }
}

bool HasEffect(const ContainerUpdate& update) {
  return !update.owned.empty() || !update.envs.empty() || !update.annotations.empty();
}

void ApplyToCreateContainer(const ContainerUpdate& update,
                            ::runtime::v1::CreateContainerRequest* request) {
  ::runtime::v1::ContainerConfig* config = request->mutable_config();
  if (!update.owned.empty()) {
    ApplyOwnedFields(update, config->mutable_linux()->mutable_resources());
  }
  ApplyEnvsAndAnnotations(update, config);
}

void ApplyToUpdateContainerResources(const ContainerUpdate& update,
                                     ::runtime::v1::UpdateContainerResourcesRequest* request) {
  if (update.owned.empty()) return;
  ApplyOwnedFields(update, request->mutable_linux());
}

::runtime::v1::UpdateContainerResourcesRequest UpdateRequestFor(const std::string& container_id,
                                                                const ContainerUpdate& update) {
  ::runtime::v1::UpdateContainerResourcesRequest request;
  request.set_container_id(container_id);
  ApplyOwnedFields(update, request.mutable_linux());
  for (const auto& [key, value] : update.annotations) (*request.mutable_annotations())[key] = value;
  return request;
}

}  // namespace qrm::apply
