// CpuState keeps its indexes (dedicated CPUs, counts, NUMA claims) in step with the containers,
// and pool containers' CPUs are derived from the pools, never stored.
#include "plugins/cpu/cpu_state.h"

#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

CpuSet Cpus(const std::string& text) {
  auto cpus = CpuSet::Parse(text);
  REQUIRE(cpus.ok());
  return *cpus;
}

ContainerAllocation Dedicated(const std::string& cpus, std::optional<NumaMask> nodes = {}) {
  ContainerAllocation c;
  c.level = qos::QosLevel::kDedicated;
  c.cpuset = Cpus(cpus);
  c.request_milli = 1000 * c.cpuset.Size();
  if (nodes) {
    c.numa_binding = true;
    c.numa_nodes = *nodes;
  }
  return c;
}

ContainerAllocation Pool(qos::QosLevel level, const std::string& stale_cpus = "0-3") {
  ContainerAllocation c;
  c.level = level;
  c.cpuset = Cpus(stale_cpus);  // what an older entry may say: not kept
  return c;
}

TEST_CASE("the state's indexes follow every Put, Erase and TakePod", "[cpu][state]") {
  CpuState state;
  state.Put("a", "d1", Dedicated("4-5", NumaMask::FromBits(0b1)));
  state.Put("a", "s", Pool(qos::QosLevel::kShared));
  state.Put("b", "d2", Dedicated("8-9"));
  state.Put("b", "r", Pool(qos::QosLevel::kReclaimed));
  CHECK(state.ContainerCount() == 4);
  CHECK(state.DedicatedCpus().ToString() == "4-5,8-9");
  CHECK(state.HasReclaimed());
  CHECK(state.BoundDedicated() == std::set<CpuState::ContainerKey>{{"a", "d1"}});
  CHECK(state.Find("a", "s")->cpuset.Empty());

  // Replacing a container takes its old CPUs and claim out first.
  state.Put("a", "d1", Dedicated("6"));
  CHECK(state.ContainerCount() == 4);
  CHECK(state.DedicatedCpus().ToString() == "6,8-9");
  CHECK(state.BoundDedicated().empty());

  const PodAllocations taken = state.TakePod("b");
  CHECK(taken.size() == 2);
  CHECK(state.ContainerCount() == 2);
  CHECK(state.DedicatedCpus().ToString() == "6");
  CHECK_FALSE(state.HasReclaimed());
  CHECK(state.TakePod("b").empty());

  state.Erase("a", "d1");
  state.Erase("a", "missing");
  CHECK(state.DedicatedCpus().Empty());
  state.Erase("a", "s");
  CHECK(state.pods().empty());
  CHECK(state.ContainerCount() == 0);

  // Built from pods, the same indexes as built one by one.
  CpuState::Pods pods;
  pods["a"]["d1"] = Dedicated("4-5", NumaMask::FromBits(0b1));
  pods["b"]["r"] = Pool(qos::QosLevel::kReclaimed);
  CpuState built(pods);
  CpuState one_by_one;
  one_by_one.Put("b", "r", Pool(qos::QosLevel::kReclaimed));
  one_by_one.Put("a", "d1", Dedicated("4-5", NumaMask::FromBits(0b1)));
  CHECK(built == one_by_one);
}

TEST_CASE("a container's CPUs are its own or its pool's", "[cpu][state]") {
  const CpuLayout layout(FakeTopology("doc80"));
  CpuPools pools;
  pools.reserved = Cpus("0-1,40-41");
  pools.dedicated = Cpus("2-21");
  pools.reclaimed = Cpus("38-39,78-79");
  pools.shared = Cpus("22-37,42-77");
  CHECK(ContainerCpus(layout, pools, Dedicated("2-21")).ToString() == "2-21");
  CHECK(ContainerCpus(layout, pools, Pool(qos::QosLevel::kShared)) == pools.shared);
  CHECK(ContainerCpus(layout, pools, Pool(qos::QosLevel::kReclaimed)) == pools.reclaimed);
  CHECK(ContainerCpus(layout, pools, Pool(qos::QosLevel::kSystem)) == pools.reserved);
  ContainerAllocation bound = Pool(qos::QosLevel::kShared);
  bound.numa_binding = true;
  bound.numa_nodes = NumaMask::FromBits(0b1);
  CHECK(ContainerCpus(layout, pools, bound).ToString() == "22-37");
  // Node 0's shared CPUs all dedicated: the whole shared pool beats none.
  pools.shared = Cpus("42-77");
  CHECK(ContainerCpus(layout, pools, bound) == pools.shared);
  // No reserved or reclaimed pool: system and reclaimed containers share the shared pool.
  pools.reserved = CpuSet();
  pools.reclaimed = CpuSet();
  CHECK(ContainerCpus(layout, pools, Pool(qos::QosLevel::kSystem)) == pools.shared);
  CHECK(ContainerCpus(layout, pools, Pool(qos::QosLevel::kReclaimed)) == pools.shared);
  // WithCpus: the entry as recorded, with the CPUs it runs on.
  CHECK(WithCpus(layout, pools, Pool(qos::QosLevel::kShared)).cpuset == pools.shared);
}

}  // namespace
}  // namespace qrm::cpu::testing
