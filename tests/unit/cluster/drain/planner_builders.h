// Small clusters for the planner's unit tests, built as structs (the JSON path has its own
// tests): nodes with allocatable CPU and memory, pods owned by a ReplicaSet.
#pragma once

#include <string>
#include <utility>

#include "cluster/drain/snapshot.h"

namespace qrm::cluster::drain {

inline constexpr int64_t kGiB = int64_t{1} << 30;

inline DrainNode MakeNode(std::string name, int64_t cpus, int64_t memory_gib) {
  DrainNode n;
  n.name = std::move(name);
  n.allocatable.cpu_milli = cpus * 1000;
  n.allocatable.memory_bytes = memory_gib * kGiB;
  n.allocatable_pods = 110;
  return n;
}

inline DrainPod MakePod(std::string name, std::string node, int64_t cpu_milli, int64_t memory_gib,
                        std::string qos = "", bool numa_binding = false) {
  DrainPod p;
  p.namespace_ = "default";
  p.name = std::move(name);
  p.uid = "uid-" + p.name;
  p.node_name = std::move(node);
  p.phase = "Running";
  p.owners.push_back({"ReplicaSet", "rs", true});
  p.requests.cpu_milli = cpu_milli;
  p.requests.memory_bytes = memory_gib * kGiB;
  p.containers.push_back({"main", p.requests});
  p.qos_level = std::move(qos);
  p.numa_binding = numa_binding;
  return p;
}

inline ClusterSnapshot MakeSnapshot(std::vector<DrainNode> nodes, std::vector<DrainPod> pods,
                                    std::vector<DrainPdb> pdbs = {}) {
  ClusterSnapshot s;
  s.nodes = std::move(nodes);
  s.pods = std::move(pods);
  s.pdbs = std::move(pdbs);
  s.Reindex();
  return s;
}

}  // namespace qrm::cluster::drain
