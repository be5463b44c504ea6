// The one place qrm writes into CRI messages: an admission's or a reconcile's ContainerUpdate
// (container_update.h: what to write) goes into CreateContainer and UpdateContainerResources
// requests in place, so the kubelet's fields and any field our .proto does not know (kept by
// protobuf as unknown fields) reach the runtime as they came. The CRI shim calls these for the
// requests it forwards, the reconcile loop (through the shim's runtime port) for its own.
#pragma once

#include <string>

#include "api/cri_runtime_v1.pb.h"
#include "qrm/apply/container_update.h"

namespace qrm::apply {

// Writes the owned fields of `update` into `target`, leaving every other field (and any
// unknown fields) as they are. HugepageLimits replaces entries of the same page size and
// keeps the rest; Unified sets or overwrites its keys and keeps the rest.
void ApplyOwnedFields(const ContainerUpdate& update,
                      ::runtime::v1::LinuxContainerResources* target);

// Merges envs into config->envs (an existing key's entries are overwritten in place, so the
// kubelet's order is kept; new keys are appended in key order) and annotations into
// config->annotations (set or overwritten).
void ApplyEnvsAndAnnotations(const ContainerUpdate& update, ::runtime::v1::ContainerConfig* config);

// True if `update` writes anything (owned fields, envs or annotations).
bool HasEffect(const ContainerUpdate& update);

// Owned fields into config.linux.resources, envs and annotations into config.
void ApplyToCreateContainer(const ContainerUpdate& update,
                            ::runtime::v1::CreateContainerRequest* request);

// Owned fields into linux (the kubelet's other fields stay).
void ApplyToUpdateContainerResources(const ContainerUpdate& update,
                                     ::runtime::v1::UpdateContainerResourcesRequest* request);

// The update the reconcile loop sends: only the owned fields (runtimes leave zero/empty
// fields of an update unchanged) and qrm's annotations.
::runtime::v1::UpdateContainerResourcesRequest UpdateRequestFor(const std::string& container_id,
                                                                const ContainerUpdate& update);

}  // namespace qrm::apply
