// The synthetic cluster generator: the same seed gives the same cluster, the snapshot is
// valid, the NUMA states are exactly capacity minus what the pods take, and the snapshot
// survives kubectl JSON.
#include "cluster/drain/synthetic_cluster.h"

#include <catch2/catch.hpp>

#include "cluster/drain/drainability.h"
#include "cluster/drain/snapshot_json.h"
#include "cluster/drain/snapshot_writer.h"

namespace qrm::cluster::drain {
namespace {

SyntheticClusterOptions Small(uint64_t seed) {
  SyntheticClusterOptions o;
  o.nodes = 60;
  o.pods_per_node = 20;
  o.pdbs = 10;
  o.empty_fraction = 0.1;
  o.seed = seed;
  return o;
}

// The sums every zone of the node has given away.
Resources Taken(const NumaNodeState& state) {
  Resources r;
  for (const NumaZone& z : state.zones) {
    r.cpu_milli += z.cpu_milli.capacity - z.cpu_milli.free;
    r.memory_bytes += z.memory_bytes.capacity - z.memory_bytes.free;
  }
  return r;
}

// What the node's app containers ask for (init containers hand theirs on; see
// numa_admission.h), with dedicated CPUs whole as the generator makes them; a numa_exclusive
// pod's CPUs are every whole CPU its zone had free, which the zone's binding holds.
Resources Requested(const ClusterSnapshot& s, const std::string& node, const NumaNodeState& state) {
  Resources r;
  for (const NumaZone& z : state.zones) {
    if (z.binding.exclusive) r.cpu_milli += z.binding.dedicated_cpu_milli;
  }
  auto it = s.pods_by_node.find(node);
  if (it == s.pods_by_node.end()) return r;
  for (size_t i : it->second) {
    for (const ContainerRequests& c : s.pods[i].containers) {
      if (!s.pods[i].numa_exclusive) r.cpu_milli += c.requests.cpu_milli;
      r.memory_bytes += c.requests.memory_bytes;
    }
  }
  return r;
}

TEST_CASE("a synthetic cluster is the same for the same seed and differs for another") {
  const SyntheticCluster a = GenerateCluster(Small(7));
  const SyntheticCluster b = GenerateCluster(Small(7));
  const SyntheticCluster c = GenerateCluster(Small(8));
  const std::string json = WriteSnapshotJson(a.snapshot);
  CHECK(json == WriteSnapshotJson(b.snapshot));
  CHECK(json != WriteSnapshotJson(c.snapshot));
  REQUIRE(a.numa.size() == b.numa.size());
  for (const auto& [name, state] : a.numa) {
    INFO(name);
    REQUIRE(b.numa.count(name) == 1);
    CHECK(state.zones == b.numa.at(name).zones);
    CHECK(state.policy == b.numa.at(name).policy);
  }
  CHECK(a.snapshot.controller_replicas == b.snapshot.controller_replicas);
  CHECK(a.refused == b.refused);
}

TEST_CASE("a synthetic cluster validates and has the shape asked for") {
  const SyntheticClusterOptions o = Small(1);
  const SyntheticCluster s = GenerateCluster(o);
  const Status valid = Validate(s.snapshot);
  INFO(valid.ToString());
  CHECK(valid.ok());
  REQUIRE(s.snapshot.nodes.size() == o.nodes);
  CHECK(s.numa.size() == o.nodes);
  CHECK(s.snapshot.pods.size() + s.refused <= o.nodes * o.pods_per_node);
  CHECK(s.snapshot.pods.size() > o.nodes * o.pods_per_node / 2);
  CHECK(s.snapshot.pdbs.size() == static_cast<size_t>(o.pdbs));
  CHECK(s.snapshot.pod_index.size() == s.snapshot.pods.size());  // indexed

  size_t four = 0, bound = 0, under = 0, over = 0, empty = 0;
  for (const DrainNode& node : s.snapshot.nodes) {
    four += s.numa.at(node.name).zones.size() == 4;
    const NodeEligibility e = EvaluateEligibility(s.snapshot, node, {}, o.now);
    (e.eligible ? under : over)++;
    empty += s.snapshot.pods_by_node.at(node.name).size() == 2;  // daemonsets only
  }
  for (const DrainPod& pod : s.snapshot.pods) bound += pod.numa_binding;
  CHECK(four > 0);
  CHECK(four < o.nodes);
  CHECK(bound > 0);
  // Some nodes under the utilisation threshold and some above.
  CHECK(under > 0);
  CHECK(over > 0);
  CHECK(empty > 0);
}

TEST_CASE("synthetic NUMA-bound pods are dedicated whole CPUs with the katalyst annotations") {
  const SyntheticCluster s = GenerateCluster(Small(2));
  size_t bound = 0, exclusive = 0;
  for (const DrainPod& pod : s.snapshot.pods) {
    if (!pod.numa_binding) continue;
    ++bound;
    exclusive += pod.numa_exclusive ? 1 : 0;
    INFO(pod.Key());
    CHECK(pod.qos_level == "dedicated_cores");
    CHECK(pod.annotations.at("katalyst.kubewharf.io/qos_level") == "dedicated_cores");
    CHECK(pod.annotations.at("katalyst.kubewharf.io/memory_enhancement") ==
          (pod.numa_exclusive ? R"({"numa_binding":"true","numa_exclusive":"true"})"
                              : R"({"numa_binding":"true"})"));
    CHECK(pod.requests.cpu_milli % 1000 == 0);
    REQUIRE(pod.Controller() != nullptr);
    CHECK(pod.Controller()->kind == "ReplicaSet");
  }
  CHECK(bound > 0);
  CHECK(exclusive > 0);
}

TEST_CASE("synthetic NUMA free amounts are capacity minus what the pods take") {
  for (uint64_t seed : {1, 2, 3}) {
    const SyntheticCluster s = GenerateCluster(Small(seed));
    for (const DrainNode& node : s.snapshot.nodes) {
      INFO("seed " << seed << " node " << node.name);
      const NumaNodeState& state = s.numa.at(node.name);
      const Resources taken = Taken(state), requested = Requested(s.snapshot, node.name, state);
      CHECK(taken.cpu_milli == requested.cpu_milli);
      CHECK(taken.memory_bytes == requested.memory_bytes);
      // The node's allocatable is its zones' capacity, so qrm and the scheduler agree.
      int64_t cpu = 0, memory = 0;
      for (const NumaZone& z : state.zones) {
        cpu += z.cpu_milli.capacity;
        memory += z.memory_bytes.capacity;
        CHECK(z.cpu_milli.free >= 0);
        CHECK(z.memory_bytes.free >= 0);
        if (z.binding.exclusive) {  // one pod, with every whole CPU
          CHECK(z.binding.bound_pods == 1);
          CHECK(z.cpu_milli.free < 1000);
        }
      }
      CHECK(cpu == node.allocatable.cpu_milli);
      CHECK(memory == node.allocatable.memory_bytes);
    }
  }
}

TEST_CASE("a synthetic cluster reads back from kubectl JSON with the same fields") {
  const SyntheticCluster s = GenerateCluster(Small(5));
  const std::string json = WriteSnapshotJson(s.snapshot);
  DecodeOptions options;
  options.node_group_label = kSyntheticNodeGroupLabel;
  StatusOr<ClusterSnapshot> back = DecodeSnapshot({{"synthetic.json", json}}, options);
  INFO(back.status().ToString());
  REQUIRE(back.ok());
  // snapshot_writer_test compares every field of written objects; here the text written from
  // what was read must be the text read, and the fields the generator derives must agree.
  CHECK(WriteSnapshotJson(*back) == json);
  REQUIRE(back->pods.size() == s.snapshot.pods.size());
  for (size_t i = 0; i < back->pods.size(); ++i) {
    const DrainPod &a = s.snapshot.pods[i], &b = back->pods[i];
    INFO(a.Key());
    CHECK(a.qos_level == b.qos_level);
    CHECK(a.numa_binding == b.numa_binding);
    CHECK(a.requests.cpu_milli == b.requests.cpu_milli);
    CHECK(a.requests.memory_bytes == b.requests.memory_bytes);
  }
  for (size_t i = 0; i < back->nodes.size(); ++i) {
    CHECK(back->nodes[i].node_group == s.snapshot.nodes[i].node_group);
  }
  CHECK_FALSE(back->controller_replicas.empty());
  CHECK(back->controller_replicas == s.snapshot.controller_replicas);  // the ReplicaSets
}

}  // namespace
}  // namespace qrm::cluster::drain
