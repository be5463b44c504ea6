// Builds the host's normalized ContainerRequest from a kubelet CreateContainer call.
//
// The CRI carries requests only indirectly, as the cgroup settings the kubelet derived from
// the pod spec:
//  * CPU request from cpu_shares: milli-CPU = ceil(shares * 1000 / 1024). The kubelet computes
//    shares = floor(milli * 1024 / 1000), and the ceiling is its exact inverse. Shares of 2
//    or less are the kubelet's minimum for containers without a CPU request: 0 cores.
//  * CPU limit from cpu_quota / cpu_period (both > 0; quota -1 or 0 means no limit). It is
//    the request only when cpu_shares is 0 (a caller that sets quota but no shares).
//  * memory from memory_limit_in_bytes (there is no memory request in the CRI).
//  * "cpu" and "memory" are always requested, possibly 0: a CPU or memory plugin places
//    every container (e.g. in a shared pool), not only those with requests.
// Annotations override (annotations.h): qrm.io/resources, then qrm.io/cpu-request and
// qrm.io/memory-request; qrm.io/container-type sets the container type.
// Pod-level requests (for the pod topology scope) come from sandbox_config.linux.resources
// when the kubelet sends them; the native QoS class from the kubelet's cgroup parent name.
#pragma once

#include <cstdint>
#include <optional>

#include "api/cri_runtime_v1.pb.h"
#include "common/status.h"
#include "cri-shim/pod_info.h"
#include "qrm/admission/container_request.h"

namespace qrm::shim {

// `pod` is what the shim knows about the sandbox: PodInfoFromSandboxConfig of the request's
// sandbox_config, or, when the caller sent none, what RunPodSandbox recorded. Errors are
// kInvalidArgument naming the field or annotation and its value: no pod uid or container
// name, negative cgroup values, malformed override annotations.
StatusOr<admission::ContainerRequest> BuildContainerRequest(
    const ::runtime::v1::CreateContainerRequest& request, const PodInfo& pod);

// Cores requested by `shares` (see above); kInvalidArgument naming `field` if negative.
StatusOr<double> CpuRequestFromShares(int64_t shares, const char* field);
// Cores allowed by quota/period, or nullopt for no limit; kInvalidArgument naming `field`
// for a negative period or a quota below -1.
StatusOr<std::optional<double>> CpuLimitFromQuota(int64_t quota, int64_t period, const char* field);

// "Guaranteed", "Burstable" or "BestEffort" from the kubelet's pod cgroup parent
// (".../kubepods/burstable/pod<uid>", "kubepods-besteffort-pod<uid>.slice"); empty when
// the parent is not one of the kubelet's.
std::string NativeQosClassFromCgroupParent(const std::string& cgroup_parent);

}  // namespace qrm::shim
