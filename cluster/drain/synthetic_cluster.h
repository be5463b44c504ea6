// A synthetic cluster whose ground truth is known, for the drain bench (P12), the planner's
// randomised property test and the fuzz seeds: nodes with 2 or 4 NUMA zones in 3 zones, pods
// placed on them as qrm would have admitted them (some spread over the zones, some replicas
// anti-affine by node, some on an EBS volume (CSI) of their node's zone), and the NUMA state
// qrm would hold afterwards. Every node has a CSINode; on every tenth node (index 0, 10, ...)
// the EBS driver's attach limit is what the node's pods already hold, elsewhere 2 more.
//
// Every pod was admitted on its node with numa_admission.h (Admit, then Place on the node's
// state), so each node's NumaNodeState is exactly its capacity minus what its pods take, and
// the NUMA-bound pods' CPUs and memory lie within one zone; a pod refused there (or placed
// across zones although NUMA-bound) is left out, as the kubelet would have refused it.
//
// The same options give the same cluster on every platform: the random numbers come from
// std::mt19937_64, whose sequence the standard fixes, mapped to ranges here rather than by
// the <random> distributions, whose output is implementation-defined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "cluster/drain/numa_state.h"
#include "cluster/drain/snapshot.h"

namespace qrm::cluster::drain {

// The node label holding a synthetic node's group (DecodeOptions::node_group_label).
inline constexpr const char* kSyntheticNodeGroupLabel = "synthetic.qrm.io/node-group";
// Nodes are labelled topology.kubernetes.io/zone zone-0.. zone-<n-1>, round robin.
inline constexpr size_t kSyntheticZones = 3;
// The CSI driver of the synthetic claims' volumes.
inline constexpr const char* kSyntheticCsiDriver = "ebs.csi.aws.com";

struct SyntheticClusterOptions {
  size_t nodes = 1000;
  // Pods per node, the daemonset pods included; empty nodes get only their daemonset pods.
  int pods_per_node = 30;
  // The share of nodes with 4 NUMA zones (64 CPUs, 256 GiB); the others have 2 (32 CPUs,
  // 128 GiB).
  double four_numa_fraction = 0.5;
  // The share of application pods that are dedicated_cores with numa_binding (whole CPUs,
  // within one zone). Nodes with the single-numa-node policy get more of them than the others.
  double numa_bound_fraction = 0.2;
  // The mean share of a node's CPU its pods request; each node's share is drawn around it
  // (0.4x to 1.6x, at most 0.95), so that some nodes are under the 0.5 utilisation threshold
  // and some above.
  double fill = 0.6;
  // PodDisruptionBudgets: CoreDNS's, then one each over applications spread evenly (about a
  // tenth allow no disruption at all, blocking their pods' nodes).
  int pdbs = 50;
  // The share of shared applications whose pods spread over the zones (a DoNotSchedule
  // topology spread constraint, maxSkew 2 or 3, with matchLabelKeys pod-template-hash).
  double spread_fraction = 0.2;
  // The share of NUMA-bound applications whose replicas may not share a node (required pod
  // anti-affinity on kubernetes.io/hostname); they are generated that way too.
  double anti_affinity_fraction = 0.3;
  // The share of NUMA-bound applications that are numa_exclusive (a zone each, all its CPUs).
  double exclusive_fraction = 0.1;
  // The share of nodes that run nothing but daemonset pods.
  double empty_fraction = 0.05;
  uint64_t seed = 1;
  // Unix seconds the creation timestamps lie before (PlannerOptions::now for a plan).
  int64_t now = 1'795'000'000;
};

struct SyntheticCluster {
  ClusterSnapshot snapshot;  // indexed (Reindex) and valid (Validate)
  // Every node's NUMA state after its pods were placed, by node name.
  std::map<std::string, NumaNodeState> numa;
  // Pods left out because qrm's admission refused them on their node.
  size_t refused = 0;
};

SyntheticCluster GenerateCluster(const SyntheticClusterOptions& options);

}  // namespace qrm::cluster::drain
