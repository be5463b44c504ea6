// Writes qrm's admission result into CRI requests, in place: the kubelet's fields and any
// field our .proto does not know (kept by protobuf as unknown fields) reach the runtime as
// they came.
#pragma once

#include <string>

#include "api/cri_runtime_v1.pb.h"
#include "qrm/apply/container_update.h"

namespace qrm::shim {

// True if `update` writes anything (owned fields, envs or annotations).
bool HasEffect(const host::ContainerUpdate& update);

// Owned fields into config.linux.resources, envs and annotations into config.
void ApplyToCreateContainer(const host::ContainerUpdate& update,
                            ::runtime::v1::CreateContainerRequest* request);

// Owned fields into linux (the kubelet's other fields stay).
void ApplyToUpdateContainerResources(const host::ContainerUpdate& update,
                                     ::runtime::v1::UpdateContainerResourcesRequest* request);

// The update the reconcile loop sends: only the owned fields (runtimes leave zero/empty
// fields of an update unchanged) and qrm's annotations.
::runtime::v1::UpdateContainerResourcesRequest UpdateRequestFor(
    const std::string& container_id, const host::ContainerUpdate& update);

}  // namespace qrm::shim
