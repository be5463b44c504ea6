// The annotation and label keys the CRI shim reads. docs/cri-shim.md documents them for
// users; keep the two in step.
#pragma once

namespace qrm::shim {

// --- Written by the kubelet -------------------------------------------------------------
// Pod identity on PodSandboxConfig.labels and ContainerConfig.labels.
inline constexpr const char* kPodUidLabel = "io.kubernetes.pod.uid";
inline constexpr const char* kPodNameLabel = "io.kubernetes.pod.name";
inline constexpr const char* kPodNamespaceLabel = "io.kubernetes.pod.namespace";
inline constexpr const char* kContainerNameLabel = "io.kubernetes.container.name";

// --- Read by qrm (pod annotations unless noted) -------------------------------------------
// "true": the pod is passed through untouched (never admitted, never edited).
inline constexpr const char* kSkipAnnotation = "qrm.io/skip";

// Per-container overrides. Each is looked up, first match wins, as
//   1. the key itself in ContainerConfig.annotations (set by whatever wrote the CRI request),
//   2. "<key>.<container name>" in the pod's annotations (one container of the pod),
//   3. the key itself in the pod's annotations (every container of the pod).
// CPU request in cores as a Kubernetes quantity ("2", "1500m"); replaces the value derived
// from cpu_shares.
inline constexpr const char* kCpuRequestAnnotation = "qrm.io/cpu-request";
// Memory request in bytes as a quantity ("512Mi"); replaces memory_limit_in_bytes (the CRI
// carries no memory request).
inline constexpr const char* kMemoryRequestAnnotation = "qrm.io/memory-request";
// Requests of any resources as a JSON object of resource name -> quantity (number or
// quantity string), e.g. {"example.com/accel": 2, "nic": "1"}; applied before the two above.
inline constexpr const char* kResourcesAnnotation = "qrm.io/resources";
// INIT, MAIN, SIDECAR or EPHEMERAL (the CRI does not say; default MAIN).
inline constexpr const char* kContainerTypeAnnotation = "qrm.io/container-type";

}  // namespace qrm::shim
