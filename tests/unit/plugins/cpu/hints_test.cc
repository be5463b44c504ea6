// GetTopologyHints: kubelet masks for unbound dedicated containers, NUMA-bound rules, and
// "no preference" for the pool levels.
#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

const std::map<std::string, std::string> kDedicated = {
    {"katalyst.kubewharf.io/qos_level", "dedicated_cores"}};
const std::map<std::string, std::string> kBound = {
    {"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
    {"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding":"true"})"}};
const std::map<std::string, std::string> kExclusive = {
    {"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
    {"katalyst.kubewharf.io/memory_enhancement",
     R"({"numa_binding":"true","numa_exclusive":"true"})"}};

TEST_CASE("pool levels have no NUMA preference", "[cpu][hints]") {
  auto plugin = MakePlugin(FakeTopology("4x32smt"));
  for (const char* level : {"shared_cores", "reclaimed_cores", "system_cores"}) {
    INFO(level);
    CHECK(Hints(*plugin, Request("p", "", 2, {{"katalyst.kubewharf.io/qos_level", level}})) ==
          "absent");
  }
  CHECK(Hints(*plugin, Request("p", "", 2)) == "absent");  // no annotation: shared_cores
}

TEST_CASE("unbound dedicated hints are the kubelet static policy's", "[cpu][hints]") {
  auto plugin = MakePlugin(FakeTopology("4x32smt"));  // 4 nodes x 32 CPUs
  // Fits one node: every mask, the single nodes preferred.
  CHECK(Hints(*plugin, Request("p", "", 8, kDedicated)) ==
        "0* 1* 2* 3* 0-1 0,2 0,3 1-2 1,3 2-3 0-2 0-1,3 0,2-3 1-3 0-3");
  // 40 CPUs need two nodes even on an empty machine: pairs preferred.
  CHECK(Hints(*plugin, Request("p", "", 40, kDedicated)) ==
        "0-1* 0,2* 0,3* 1-2* 1,3* 2-3* 0-2 0-1,3 0,2-3 1-3 0-3");

  // Fill node 0 with 30 CPUs: only 2 left there, so an 8-CPU single-node hint cannot be node
  // 0, but wider masks with node 0 still can (they are not preferred).
  AllocateOk(*plugin, WithHint(Request("big", "", 30, kDedicated), {0}));
  CHECK(Hints(*plugin, Request("p", "", 8, kDedicated)) ==
        "1* 2* 3* 0-1 0,2 0,3 1-2 1,3 2-3 0-2 0-1,3 0,2-3 1-3 0-3");
}

TEST_CASE("NUMA-bound hints: preferred are the narrowest that fit now", "[cpu][hints]") {
  auto plugin = MakePlugin(FakeTopology("4x32smt"));
  AllocateOk(*plugin, WithHint(Request("a", "", 30, kBound), {0}));
  AllocateOk(*plugin, WithHint(Request("b", "", 30, kBound), {1}));
  AllocateOk(*plugin, WithHint(Request("c", "", 30, kBound), {2}));
  // Free: 2 on each of nodes 0-2, 32 on node 3.
  // 6 CPUs: only node 3 alone has them; wider sets fit too, nodes 0-2 together exactly.
  CHECK(Hints(*plugin, Request("p", "", 6, kBound)) == "3* 0,3 1,3 2-3 0-2 0-1,3 0,2-3 1-3 0-3");
  // 33 CPUs: no single node; the pairs with node 3 are the narrowest, so preferred.
  CHECK(Hints(*plugin, Request("p", "", 33, kBound)) == "0,3* 1,3* 2-3* 0-1,3 0,2-3 1-3 0-3");
}

TEST_CASE("numa_exclusive needs whole free nodes and keeps others away", "[cpu][hints]") {
  auto plugin = MakePlugin(FakeTopology("4x32smt"));
  AllocateOk(*plugin, WithHint(Request("a", "", 2, kBound), {0}));
  // Node 0 hosts a NUMA-bound container: an exclusive one avoids it.
  CHECK(Hints(*plugin, Request("x", "", 4, kExclusive)) == "1* 2* 3* 1-2 1,3 2-3 1-3");
  const auto x = AllocateOk(*plugin, WithHint(Request("x", "", 4, kExclusive), {1}));
  CHECK(x.allocation_result() == "32-63");
  CHECK(x.allocated_quantity() == 32);
  // Node 1 is now held exclusively: nobody NUMA-bound goes there.
  CHECK(Hints(*plugin, Request("p", "", 2, kBound)) == "0* 2* 3* 0,2 0,3 2-3 0,2-3");
  // An unbound dedicated container can still go anywhere with free CPUs.
  CHECK(Hints(*plugin, Request("u", "", 2, kDedicated)) ==
        "0* 2* 3* 0-1 0,2 0,3 1-2 1,3 2-3 0-2 0-1,3 0,2-3 1-3 0-3");
}

TEST_CASE("a request that would eat the reclaimed pool cannot be satisfied", "[cpu][hints]") {
  CpuPluginConfig config;
  config.reclaimed_pool_size = 4;  // explicit: kept free (the auto pool would yield)
  auto plugin = MakePlugin(FakeTopology("nosmt"), config);  // 16 CPUs, reclaimed 4, shared >= 1
  CHECK(Hints(*plugin, Request("p", "", 11, kDedicated)) == "0*");
  CHECK(Hints(*plugin, Request("p", "", 12, kDedicated)) == "");
  CHECK(Hints(*plugin, Request("p", "", 12, kBound)) == "");
  auto refused = plugin->Allocate(Request("p", "", 12, kDedicated));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(refused.status().message(), Catch::Contains("reclaimed and shared pools need 5"));
}

TEST_CASE("a container already placed is hinted where it is", "[cpu][hints]") {
  auto plugin = MakePlugin(FakeTopology("4x32smt"));
  AllocateOk(*plugin, WithHint(Request("a", "", 8, kBound), {2}));
  CHECK(Hints(*plugin, Request("a", "", 8, kBound)) == "2*");
}

}  // namespace
}  // namespace qrm::cpu::testing
