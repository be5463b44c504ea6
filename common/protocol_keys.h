// Every label, annotation, environment variable and resource name qrm reads or writes: the
// protocol vocabulary between the kubelet, the CRI shim, qrm-host, the plugins and the tools
// that read qrm's answers. One home, so no two components can spell a key differently;
// docs/annotations.md documents each key for users (a test keeps the two in step).
//
// The wire formats are the kubewharf ones, field for field; qrm's own keys ride in their
// free-form label and annotation maps, so a component that does not know them keeps working.
#pragma once

#include <string_view>

namespace qrm {

// --- Written by the kubelet (CRI PodSandboxConfig and ContainerConfig labels) -------------
inline constexpr const char* kPodUidLabel = "io.kubernetes.pod.uid";
inline constexpr const char* kPodNameLabel = "io.kubernetes.pod.name";
inline constexpr const char* kPodNamespaceLabel = "io.kubernetes.pod.namespace";
inline constexpr const char* kContainerNameLabel = "io.kubernetes.container.name";

// --- Katalyst and the kubewharf kubelet (pod labels and annotations) ----------------------
// Annotation: dedicated_cores, shared_cores, reclaimed_cores or system_cores.
inline constexpr std::string_view kQosLevelKey = "katalyst.kubewharf.io/qos_level";
// Annotation: JSON object, {"numa_binding": "true", "numa_exclusive": "true"}.
inline constexpr std::string_view kMemoryEnhancementKey =
    "katalyst.kubewharf.io/memory_enhancement";
// The kubewharf kubelet's pod role label and pod type annotation
// (staging/src/k8s.io/kubelet/pkg/apis/resourceplugin/v1alpha1/constants.go).
inline constexpr std::string_view kPodRoleLabelKey = "katalyst.kubewharf.io/pod_role";
inline constexpr std::string_view kPodTypeKey = "katalyst.kubewharf.io/pod_type";
// The QRM design document's role annotation (qrm's extension; the label wins over it).
inline constexpr std::string_view kPodRoleKey = "kubernetes.io/pod-role";

// --- Read by the CRI shim (pod annotations unless noted) -----------------------------------
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

// --- On ResourceRequest.annotations, from qrm-host to a plugin ------------------------------
// On a request the host replays to a plugin that no longer reports a container it holds (the
// plugin lost its state file): the allocation_result the plugin gave before, e.g. "2-5" for
// CPUs. A plugin takes exactly that again when it is still free, so a running container keeps
// its CPUs, nodes or NIC; otherwise it allocates as for a new container.
inline constexpr const char* kPreviousAllocationAnnotation = "qrm.io/previous-allocation";

// --- Stored by qrm-host on a container's request (its checkpoint) --------------------------
// The resources admission left out under the "ignore" failure policy (their plugin was down),
// comma-separated. The reconcile loop allocates them once the plugin answers again.
inline constexpr const char* kSkippedResourcesAnnotation = "qrm.io/skipped-resources";
// "true" on the synthesized request of an adopted container, whose real request is unknown.
inline constexpr const char* kAdoptedAnnotation = "qrm.io/adopted";

// --- Written by the plugins --------------------------------------------------------------
// Container annotation (CPU plugin): the QoS level the container was admitted at.
inline constexpr const char* kQosLevelAnnotation = "qrm.io/qos-level";
// On per-NUMA TopologyAwareQuantity annotations (CPU plugin): the CPUs counted ("2-39");
// pod-resources lists them as the container's or the node's CPU ids.
inline constexpr const char* kCpusAnnotation = "qrm.io/cpus";
// On per-NUMA allocatable quantities (CPU plugin): the node's reclaimed-pool CPUs.
inline constexpr const char* kReclaimedCpusAnnotation = "qrm.io/reclaimed-cpus";
// Container annotation (NIC plugin): the network namespace of the container's NIC when it is
// not the root one.
inline constexpr const char* kNetnsAnnotation = "kubernetes.io/host-netns-path";
// Container environment (NIC plugin): the NIC and its first address of each family.
inline constexpr const char* kEnvNicName = "AFFINITY_NIC_NAME";
inline constexpr const char* kEnvNicIpv4 = "AFFINITY_NIC_ADDR_IPV4";
inline constexpr const char* kEnvNicIpv6 = "AFFINITY_NIC_ADDR_IPV6";

// --- Written by qrm-advisor: attributes of each NUMA zone of its NodeResourceTopology ---------
// What the drain planner needs to predict the CPU and memory plugins' NUMA exclusivity, which
// the zones' resources alone do not show (docs/node-report.md). Always all four on every zone.
// How many pods have a NUMA-bound container (numa_binding or numa_exclusive) on the zone: "0".
inline constexpr const char* kZoneNumaBoundPodsAttribute = "qrm.io/numa-bound-pods";
// "true" when one of them holds the zone exclusively (numa_exclusive), else "false".
inline constexpr const char* kZoneNumaExclusiveAttribute = "qrm.io/numa-exclusive";
// The CPUs dedicated_cores containers hold on the zone, as a quantity ("4", "0").
inline constexpr const char* kZoneDedicatedCpuAttribute = "qrm.io/dedicated-cpu";
// The pod roles of the NUMA-bound pods there, sorted and comma-separated ("" when none has
// one): what the plugins' role anti-affinity checks. Written with the three above; a reader
// takes its absence (an older qrm-advisor) as no roles.
inline constexpr const char* kZoneNumaBoundRolesAttribute = "qrm.io/numa-bound-roles";

// --- Koordinator keys the scheduler extender reads (apis/extension, koordinator a7a1b76) ------
// Pod label: koord-prod, koord-mid, koord-batch or koord-free (the pod's priority band).
inline constexpr std::string_view kKoordPriorityClassLabel = "koordinator.sh/priority-class";
// Pod label: LSE, LSR, LS, BE or SYSTEM.
inline constexpr std::string_view kKoordQosClassLabel = "koordinator.sh/qosClass";
// Pod annotation: "true" on a Reservation's reserve pod (never counted as load).
inline constexpr std::string_view kKoordReservePodAnnotation =
    "scheduling.koordinator.sh/reserve-pod";
// Pod annotation: JSON object of resource name -> percent, {"cpu": 100}.
inline constexpr std::string_view kKoordScalingFactorsAnnotation =
    "scheduling.koordinator.sh/load-estimated-scaling-factors";
// Pod annotations: seconds (decimal) the pod is estimated after its condition turned True.
inline constexpr std::string_view kKoordSecondsAfterPodScheduledAnnotation =
    "scheduling.koordinator.sh/load-estimated-seconds-after-pod-scheduled";
inline constexpr std::string_view kKoordSecondsAfterInitializedAnnotation =
    "scheduling.koordinator.sh/load-estimated-seconds-after-initialized";
// Node annotation: JSON ResourceList, the allocatable before Koordinator's node resource
// amplification.
inline constexpr std::string_view kKoordRawAllocatableAnnotation =
    "node.koordinator.sh/raw-allocatable";
// Node annotation: JSON CustomUsageThresholds, the node's own load-aware thresholds.
inline constexpr std::string_view kKoordUsageThresholdsAnnotation =
    "scheduling.koordinator.sh/usage-thresholds";

// --- Resource names -----------------------------------------------------------------------
// The NIC plugin's defaults: one NIC per container, and its bandwidth in Mb/s.
inline constexpr const char* kNicResourceName = "qrm.io/nic";
inline constexpr const char* kNicBandwidthResourceName = "qrm.io/nic-bandwidth";

}  // namespace qrm
