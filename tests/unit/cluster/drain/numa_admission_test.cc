// qrm admission on a node's NUMA state: the hints qrm's plugins would give, qrm's merge under
// each topology manager policy and scope, and the accounting of a placement.
#include "cluster/drain/numa_admission.h"

#include <catch2/catch.hpp>

namespace qrm::cluster::drain {
namespace {

using topology::Policy;
using topology::Scope;

constexpr int64_t kGi = 1LL << 30;

// A node whose zones have 8 CPUs and 32Gi each; `free_cpus` and `free_memory_gi` per zone.
NumaNodeState Node(std::vector<int64_t> free_cpus, std::vector<int64_t> free_memory_gi,
                   Policy policy, Scope scope = Scope::kContainer) {
  std::vector<NumaZone> zones;
  for (size_t i = 0; i < free_cpus.size(); ++i) {
    NumaZone z;
    z.id = static_cast<int>(i);
    z.cpu_milli = {free_cpus[i] * 1000, 8000};
    z.memory_bytes = {free_memory_gi[i] * kGi, 32 * kGi};
    zones.push_back(z);
  }
  auto state = MakeNumaNodeState("worker-1", std::move(zones), policy, scope);
  REQUIRE(state.ok());
  return *state;
}

NumaPodRequest Pod(NumaQos qos, bool numa_binding, std::vector<int64_t> cpus, int64_t memory_gi) {
  NumaPodRequest pod;
  pod.pod = "default/app";
  pod.qos = qos;
  pod.numa_binding = numa_binding;
  for (size_t i = 0; i < cpus.size(); ++i) {
    pod.containers.push_back({"c" + std::to_string(i), cpus[i] * 1000, memory_gi * kGi, {}});
  }
  return pod;
}

NumaPlacement AdmitOk(const NumaNodeState& state, const NumaPodRequest& pod) {
  auto placement = Admit(state, pod);
  REQUIRE(placement.ok());
  return *placement;
}

NumaMask Mask(uint64_t bits) {
  return NumaMask::FromBits(bits);
}

// 6 dedicated NUMA-bound CPUs and 1Gi; every zone has 4 CPUs free: the node has the CPUs, no
// zone has them alone, while the memory fits one zone.
TEST_CASE("a NUMA-bound dedicated pod that only fits across zones under each policy") {
  const NumaPodRequest pod = Pod(NumaQos::kDedicated, true, {6}, 1);
  for (Policy policy : {Policy::kSingleNumaNode, Policy::kRestricted}) {
    INFO(static_cast<int>(policy));
    for (const NumaNodeState& node :
         {Node({4, 4}, {32, 32}, policy), Node({2, 2, 2, 2}, {32, 32, 32, 32}, policy)}) {
      const NumaPlacement p = AdmitOk(node, pod);
      CHECK_FALSE(p.admitted);
      CHECK(p.refusal == Refusal::kTopologyAffinity);
      CHECK(p.reason == "TopologyAffinityError");
      CHECK_THAT(p.message, Catch::Contains("worker-1") && Catch::Contains("default/app") &&
                                Catch::Contains("c0") &&
                                Catch::Contains("Resources cannot be allocated with Topology"));
      CHECK(p.takes.empty());
    }
  }
  SECTION("best-effort: qrm's merge admits the best non-preferred hint, both zones") {
    const NumaPlacement p = AdmitOk(Node({4, 4}, {32, 32}, Policy::kBestEffort), pod);
    REQUIRE(p.admitted);
    CHECK(p.container_affinity.at("c0") == Mask(0b11));
    CHECK(p.nodes == Mask(0b11));
    REQUIRE(p.takes.size() == 2);
    CHECK(p.takes[0].amounts == std::map<std::string, int64_t>{{"cpu", 4000}, {"memory", kGi}});
    CHECK(p.takes[1].amounts == std::map<std::string, int64_t>{{"cpu", 2000}});
  }
  SECTION("best-effort on 4 zones: the two lowest zones") {
    const NumaPlacement p = AdmitOk(Node({2, 2, 2, 2}, {32, 32, 32, 32}, Policy::kBestEffort), pod);
    REQUIRE(p.admitted);
    CHECK(p.container_affinity.at("c0")->Count() == 3);  // 6 CPUs need three zones of 2
    CHECK(p.nodes == Mask(0b0111));
  }
  SECTION("none: every plugin places on its own first preferred hint") {
    const NumaPlacement p = AdmitOk(Node({4, 4}, {32, 32}, Policy::kNone), pod);
    REQUIRE(p.admitted);
    CHECK(p.container_affinity.at("c0") == std::nullopt);
    CHECK(p.nodes == Mask(0b11));
    CHECK(p.takes[0].amounts.at("memory") == kGi);
    CHECK(p.takes[1].amounts == std::map<std::string, int64_t>{{"cpu", 2000}});
  }
}

TEST_CASE("restricted admits a NUMA-bound pod whose every resource needs the same zones") {
  // qrm's NUMA-bound hints prefer the narrowest set that fits now, so when CPUs and memory both
  // need zones 0-1 that hint is preferred by both plugins (the kubelet, measuring against an
  // empty machine, would not prefer it).
  const NumaPodRequest pod = Pod(NumaQos::kDedicated, true, {6}, 40);
  const NumaPlacement restricted = AdmitOk(Node({4, 4}, {24, 24}, Policy::kRestricted), pod);
  CHECK(restricted.admitted);
  CHECK(restricted.nodes == Mask(0b11));
  const NumaPlacement single = AdmitOk(Node({4, 4}, {24, 24}, Policy::kSingleNumaNode), pod);
  CHECK(single.refusal == Refusal::kTopologyAffinity);
}

TEST_CASE("unbound dedicated CPUs prefer what an empty zone could hold as the kubelet does") {
  const NumaPodRequest pod = Pod(NumaQos::kDedicated, false, {6}, 1);
  CHECK(AdmitOk(Node({4, 4}, {32, 32}, Policy::kRestricted), pod).refusal ==
        Refusal::kTopologyAffinity);
  const NumaPlacement fits = AdmitOk(Node({4, 7}, {32, 32}, Policy::kSingleNumaNode), pod);
  REQUIRE(fits.admitted);
  CHECK(fits.nodes == Mask(0b10));
  // Memory of an unbound pod is the shared pool's: split over the zones by what each has free.
  CHECK(fits.takes[0].amounts.at("memory") + fits.takes[1].amounts.at("memory") == kGi);
}

TEST_CASE("a 4-zone single-numa-node node admits on the zone that fits and accounts for it") {
  NumaNodeState node = Node({2, 2, 6, 2}, {32, 32, 32, 32}, Policy::kSingleNumaNode);
  const NumaPodRequest pod = Pod(NumaQos::kDedicated, true, {4}, 8);
  const NumaPlacement first = AdmitOk(node, pod);
  REQUIRE(first.admitted);
  CHECK(first.nodes == Mask(0b0100));
  REQUIRE(first.takes.size() == 1);
  CHECK(first.takes[0].zone == 2);
  CHECK(first.takes[0].amounts ==
        std::map<std::string, int64_t>{{"cpu", 4000}, {"memory", 8 * kGi}});
  CHECK(node.Zone(2)->cpu_milli.free == 6000);  // Admit changes nothing

  REQUIRE(Place(node, first).ok());
  CHECK(node.Zone(2)->cpu_milli.free == 2000);
  CHECK(node.Zone(2)->memory_bytes.free == 24 * kGi);
  CHECK(node.Zone(0)->cpu_milli.free == 2000);

  const NumaPlacement second = AdmitOk(node, pod);
  CHECK(second.refusal == Refusal::kTopologyAffinity);
  SECTION("placing the same placement again no longer fits and changes nothing") {
    const NumaNodeState before = node;
    const Status again = Place(node, first);
    CHECK(again.code() == StatusCode::kFailedPrecondition);
    CHECK_THAT(again.message(),
               Catch::Contains("worker-1 NUMA zone 2") && Catch::Contains("4000m cpu"));
    CHECK(node.zones == before.zones);
  }
  SECTION("a refused placement cannot be placed") {
    CHECK(Place(node, second).code() == StatusCode::kFailedPrecondition);
  }
}

TEST_CASE("shared and reclaimed pods fit on the node's totals") {
  for (NumaQos qos : {NumaQos::kShared, NumaQos::kReclaimed}) {
    NumaNodeState node = Node({4, 4}, {32, 32}, Policy::kSingleNumaNode);
    const NumaPlacement p = AdmitOk(node, Pod(qos, false, {6}, 2));
    REQUIRE(p.admitted);
    CHECK(p.nodes.empty());
    CHECK(p.container_affinity.at("c0") == std::nullopt);
    REQUIRE(p.takes.size() == 2);
    CHECK(p.takes[0].amounts == std::map<std::string, int64_t>{{"cpu", 3000}, {"memory", kGi}});
    REQUIRE(Place(node, p).ok());
    CHECK(node.Zone(1)->cpu_milli.free == 1000);

    const NumaPlacement too_big = AdmitOk(node, Pod(qos, false, {3}, 1));
    CHECK(too_big.refusal == Refusal::kOutOfResources);
    CHECK_THAT(too_big.message, Catch::Contains("3000m cpu requested, the node has 2000 free"));
  }
}

TEST_CASE("a shared NUMA-bound pod aligns its memory only") {
  const NumaPodRequest pod = Pod(NumaQos::kShared, true, {6}, 20);
  const NumaPlacement p = AdmitOk(Node({4, 4}, {16, 24}, Policy::kSingleNumaNode), pod);
  REQUIRE(p.admitted);
  CHECK(p.nodes == Mask(0b10));
  CHECK(p.takes[1].amounts.at("memory") == 20 * kGi);
  CHECK(p.takes[0].amounts.count("memory") == 0);
}

TEST_CASE("scope container aligns each container and scope pod the pod's sum") {
  const NumaPodRequest pod = Pod(NumaQos::kDedicated, true, {3, 3}, 1);
  const NumaPlacement per_container =
      AdmitOk(Node({4, 4}, {32, 32}, Policy::kSingleNumaNode, Scope::kContainer), pod);
  REQUIRE(per_container.admitted);
  CHECK(per_container.container_affinity.at("c0") == Mask(0b01));
  CHECK(per_container.container_affinity.at("c1") == Mask(0b10));
  CHECK(per_container.nodes == Mask(0b11));

  const NumaPlacement whole_pod =
      AdmitOk(Node({4, 4}, {32, 32}, Policy::kSingleNumaNode, Scope::kPod), pod);
  CHECK(whole_pod.refusal == Refusal::kTopologyAffinity);
  CHECK_THAT(whole_pod.message, Catch::Contains("(pod)"));

  const NumaPlacement pod_fits =
      AdmitOk(Node({4, 7}, {32, 32}, Policy::kSingleNumaNode, Scope::kPod), pod);
  REQUIRE(pod_fits.admitted);
  CHECK(pod_fits.container_affinity.at("c0") == Mask(0b10));
  CHECK(pod_fits.container_affinity.at("c1") == Mask(0b10));
}

TEST_CASE("an init container is admitted on its own and takes nothing") {
  NumaPodRequest pod = Pod(NumaQos::kDedicated, true, {2}, 1);
  pod.init_containers.push_back({"init", 7000, kGi, {}});
  const NumaNodeState node = Node({4, 4}, {32, 32}, Policy::kSingleNumaNode);
  const NumaPlacement refused = AdmitOk(node, pod);
  CHECK(refused.refusal == Refusal::kTopologyAffinity);
  CHECK_THAT(refused.message, Catch::Contains("container init"));
  pod.init_containers[0].cpu_milli = 3000;
  const NumaPlacement p = AdmitOk(node, pod);
  REQUIRE(p.admitted);
  CHECK(p.takes[0].amounts.at("cpu") == 2000);
}

TEST_CASE("a plugin resource of one zone pulls the pod there") {
  NumaNodeState node = Node({4, 4}, {32, 32}, Policy::kSingleNumaNode);
  node.Zone(1)->extended["qrm.io/nic"] = {1, 1};
  NumaPodRequest pod = Pod(NumaQos::kDedicated, true, {2}, 1);
  pod.containers[0].extended["qrm.io/nic"] = 1;
  pod.containers[0].extended["example.com/not-numa"] = 5;
  const NumaPlacement p = AdmitOk(node, pod);
  REQUIRE(p.admitted);
  CHECK(p.nodes == Mask(0b10));
  CHECK(p.takes[0].zone == 1);
  CHECK(p.takes[0].amounts.at("qrm.io/nic") == 1);
  CHECK(p.takes[0].amounts.count("example.com/not-numa") == 0);
  REQUIRE(Place(node, p).ok());
  CHECK(AdmitOk(node, pod).refusal == Refusal::kTopologyAffinity);
}

TEST_CASE("dedicated CPUs are whole") {
  // 3.5 CPUs free per zone hold 3 whole CPUs; 2.5 CPUs requested take 3.
  std::vector<NumaZone> zones(2);
  for (int i = 0; i < 2; ++i) {
    zones[i].id = i;
    zones[i].cpu_milli = {3500, 8000};
    zones[i].memory_bytes = {32 * kGi, 32 * kGi};
  }
  auto node = MakeNumaNodeState("worker-1", zones, Policy::kSingleNumaNode, Scope::kContainer);
  REQUIRE(node.ok());
  NumaPodRequest pod = Pod(NumaQos::kDedicated, true, {0}, 1);
  pod.containers[0].cpu_milli = 2500;
  const NumaPlacement p = AdmitOk(*node, pod);
  REQUIRE(p.admitted);
  CHECK(p.takes[0].amounts.at("cpu") == 3000);
  pod.containers[0].cpu_milli = 3600;
  CHECK(AdmitOk(*node, pod).refusal == Refusal::kTopologyAffinity);
}

TEST_CASE("bad requests are errors naming the pod and container") {
  const NumaNodeState node = Node({4, 4}, {32, 32}, Policy::kRestricted);
  NumaPodRequest pod = Pod(NumaQos::kShared, false, {1}, 1);
  pod.containers[0].memory_bytes = -5;
  auto negative = Admit(node, pod);
  REQUIRE_FALSE(negative.ok());
  CHECK_THAT(negative.status().message(),
             Catch::Contains("default/app container c0: negative request -5 for memory"));
  pod.containers.clear();
  CHECK(Admit(node, pod).status().code() == StatusCode::kInvalidArgument);
}

// --- Exclusivity (the CPU and memory plugins' numa_exclusive rules) ---------------------------

// Node() with qrm's zone attributes read: nobody bound anywhere yet.
NumaNodeState KnownNode(std::vector<int64_t> free_cpus, std::vector<int64_t> free_memory_gi,
                        Policy policy) {
  NumaNodeState node = Node(std::move(free_cpus), std::move(free_memory_gi), policy);
  for (NumaZone& z : node.zones) z.binding.known = true;
  return node;
}

NumaPodRequest Exclusive(std::vector<int64_t> cpus, int64_t memory_gi) {
  NumaPodRequest pod = Pod(NumaQos::kDedicated, true, std::move(cpus), memory_gi);
  pod.numa_exclusive = true;
  return pod;
}

TEST_CASE("NUMA-bound pods stay off a zone held exclusively, whatever it has free") {
  NumaNodeState node = KnownNode({6, 4}, {32, 32}, Policy::kSingleNumaNode);
  node.zones[0].binding = {true, 1, true, 2000};
  SECTION("a dedicated one goes to the other zone") {
    const NumaPlacement p = AdmitOk(node, Pod(NumaQos::kDedicated, true, {3}, 1));
    REQUIRE(p.admitted);
    CHECK(p.nodes == Mask(0b10));
  }
  SECTION("and is refused when only that zone has room, saying why") {
    const NumaPlacement p = AdmitOk(node, Pod(NumaQos::kDedicated, true, {5}, 1));
    CHECK(p.refusal == Refusal::kTopologyAffinity);
    CHECK_THAT(p.message, Catch::Contains("NUMA node 0: held exclusively"));
  }
  SECTION("a shared_cores one binds its memory elsewhere") {
    const NumaPlacement p = AdmitOk(node, Pod(NumaQos::kShared, true, {1}, 4));
    REQUIRE(p.admitted);
    CHECK(p.nodes == Mask(0b10));
  }
  SECTION("an unbound pod does not care") {
    CHECK(AdmitOk(node, Pod(NumaQos::kDedicated, false, {5}, 1)).admitted);
  }
  SECTION("policy none: the bound pod's own hint avoids the zone too") {
    node.policy = Policy::kNone;
    const NumaPlacement p = AdmitOk(node, Pod(NumaQos::kDedicated, true, {3}, 1));
    REQUIRE(p.admitted);
    CHECK(p.nodes == Mask(0b10));
  }
}

TEST_CASE("a numa_exclusive pod needs a zone nobody is bound to and takes all of its CPUs") {
  NumaNodeState node = KnownNode({8, 8, 8}, {32, 32, 32}, Policy::kSingleNumaNode);
  node.zones[0].binding.bound_pods = 1;              // a NUMA-bound pod
  node.zones[1].binding.dedicated_cpu_milli = 1000;  // an unbound dedicated container's CPU
  node.zones[1].cpu_milli.free = 7000;
  node.zones[2].cpu_milli.free = 7500;  // shared pods' requests: 7 whole CPUs free
  const NumaPlacement p = AdmitOk(node, Exclusive({4}, 2));
  REQUIRE(p.admitted);
  CHECK(p.nodes == Mask(0b100));
  REQUIRE(p.takes.size() == 1);
  CHECK(p.takes[0].zone == 2);
  CHECK(p.takes[0].amounts == std::map<std::string, int64_t>{{"cpu", 7000}, {"memory", 2 * kGi}});
  CHECK(p.takes[0].binds);
  CHECK(p.takes[0].exclusive);
  CHECK(p.takes[0].dedicated_cpu_milli == 7000);
  REQUIRE(Place(node, p).ok());
  CHECK(node.zones[2].binding == ZoneBinding{true, 1, true, 7000});
  CHECK(node.zones[2].cpu_milli.free == 500);

  SECTION("after it, other NUMA-bound pods go elsewhere and no exclusive one fits") {
    const NumaPlacement next = AdmitOk(node, Pod(NumaQos::kShared, true, {1}, 1));
    CHECK(next.admitted);  // zone 0 has bound pods, but this one is not exclusive
    CHECK(next.nodes == Mask(0b1));
    const NumaPlacement second = AdmitOk(node, Exclusive({1}, 1));
    CHECK_FALSE(second.admitted);
    CHECK_THAT(second.message, Catch::Contains("NUMA node 0: 1 NUMA-bound pod(s) there") &&
                                   Catch::Contains("NUMA node 1: 1000m dedicated CPU held there") &&
                                   Catch::Contains("NUMA node 2: held exclusively"));
  }
}

TEST_CASE("a numa_exclusive pod does not go where the NRT does not say who is bound") {
  const NumaNodeState unknown = Node({8, 8}, {32, 32}, Policy::kSingleNumaNode);
  const NumaPlacement p = AdmitOk(unknown, Exclusive({2}, 1));
  CHECK_FALSE(p.admitted);
  CHECK_THAT(p.message, Catch::Contains("does not say who is NUMA-bound there"));
  // A plain NUMA-bound pod is placed as before the attributes existed.
  CHECK(AdmitOk(unknown, Pod(NumaQos::kDedicated, true, {2}, 1)).admitted);
}

TEST_CASE("a NUMA-bound pod stays off zones where a pod of an anti-affine role is bound") {
  NumaNodeState node = KnownNode({8, 8}, {32, 32}, Policy::kSingleNumaNode);
  node.zones[0].binding.bound_pods = 1;
  node.zones[0].binding.roles = {"storage-service"};
  NumaPodRequest reranker = Pod(NumaQos::kDedicated, true, {2}, 1);
  reranker.role = "reranker";
  reranker.anti_affine_roles = {"storage-service"};
  const NumaPlacement p = AdmitOk(node, reranker);
  REQUIRE(p.admitted);
  CHECK(p.nodes == Mask(0b10));
  REQUIRE(Place(node, p).ok());
  CHECK(node.zones[1].binding.roles == std::vector<std::string>{"reranker"});
  SECTION("the same role shares a zone") {
    NumaPodRequest store = Pod(NumaQos::kDedicated, true, {2}, 1);
    store.role = "storage-service";
    store.anti_affine_roles = {"reranker"};
    const NumaPlacement same = AdmitOk(node, store);
    REQUIRE(same.admitted);
    CHECK(same.nodes == Mask(0b1));
    REQUIRE(Place(node, same).ok());
    CHECK(node.zones[0].binding.roles == std::vector<std::string>{"storage-service"});
    CHECK(node.zones[0].binding.bound_pods == 2);
  }
  SECTION("a role anti-affine with every other role finds no zone") {
    NumaPodRequest loner = Pod(NumaQos::kShared, true, {1}, 1);
    loner.role = "numa-enhancement";
    loner.anti_affine_to_all_roles = true;
    const NumaPlacement refused = AdmitOk(node, loner);
    CHECK_FALSE(refused.admitted);
    CHECK_THAT(refused.message, Catch::Contains("NUMA node 0: role \"numa-enhancement\" is NUMA "
                                                "anti-affine with role \"storage-service\"") &&
                                    Catch::Contains("NUMA node 1: role \"numa-enhancement\""));
  }
  SECTION("a pod without a role is never anti-affine") {
    CHECK(AdmitOk(node, Pod(NumaQos::kDedicated, true, {2}, 1)).admitted);
  }
}

TEST_CASE("a pod whose QoS does not resolve is refused as qrm-host refuses it") {
  NumaPodRequest pod = Pod(NumaQos::kShared, false, {1}, 1);
  pod.qos_error = "pod role \"cache\" is not in the role table";
  const NumaPlacement p = AdmitOk(Node({8}, {32}, Policy::kNone), pod);
  CHECK_FALSE(p.admitted);
  CHECK(p.refusal == Refusal::kQosUnresolved);
  CHECK(p.reason == "CreateContainerError");
  CHECK_THAT(p.message, Catch::Contains("worker-1 pod default/app: qrm-host cannot resolve its "
                                        "QoS: pod role \"cache\""));
}

TEST_CASE("a pod counts once per zone however many containers it binds there") {
  NumaNodeState node = KnownNode({8, 8}, {32, 32}, Policy::kSingleNumaNode);
  const NumaPlacement p = AdmitOk(node, Pod(NumaQos::kDedicated, true, {2, 2}, 1));
  REQUIRE(p.admitted);
  REQUIRE(Place(node, p).ok());
  CHECK(node.zones[0].binding == ZoneBinding{true, 1, false, 4000});
  CHECK(node.zones[1].binding == ZoneBinding{true, 0, false, 0});
}

}  // namespace
}  // namespace qrm::cluster::drain
