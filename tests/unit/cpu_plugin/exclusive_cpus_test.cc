// TakeExclusiveCpus: whole sockets/nodes, then whole cores, then threads; pack before spread.
#include "plugins/cpu/exclusive_cpus.h"

#include "tests/unit/cpu_plugin/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

CpuSet Take(const CpuLayout& layout, const CpuSet& available, int count) {
  auto taken = TakeExclusiveCpus(layout, available, count);
  INFO(taken.status().ToString());
  REQUIRE(taken.ok());
  CHECK(taken->Size() == count);
  CHECK(taken->IsSubsetOf(available));
  return *taken;
}

CpuSet Parse(const std::string& text) {
  auto set = CpuSet::Parse(text);
  REQUIRE(set.ok());
  return *set;
}

TEST_CASE("on SMT machines whole cores come before single threads", "[cpu][exclusive]") {
  const CpuLayout layout(FakeTopology("4x32smt"));  // siblings 2k, 2k+1
  CHECK(Take(layout, layout.online(), 4).ToString() == "0-3");
  // 3 CPUs: one whole core and one thread of the next.
  CHECK(Take(layout, layout.online(), 3).ToString() == "0-2");
  // A lone free thread of a half-used core is used before breaking a whole core.
  CHECK(Take(layout, Parse("1,4-31"), 1).ToString() == "1");
  CHECK(Take(layout, Parse("1,4-31"), 3).ToString() == "1,4-5");
  // Two CPUs: a whole free core rather than a lone thread plus half of that core.
  CHECK(Take(layout, Parse("3,4-5"), 2).ToString() == "4-5");
  // One CPU: the lone thread rather than breaking the whole core.
  CHECK(Take(layout, Parse("3,4-7"), 1).ToString() == "3");
}

TEST_CASE("whole NUMA nodes and sockets are taken when the request covers them",
          "[cpu][exclusive]") {
  const CpuLayout layout(FakeTopology("4x32smt"));  // 2 sockets x 2 nodes x 32 CPUs
  // A socket's worth (64): socket 0, i.e. nodes 0 and 1.
  CHECK(Take(layout, layout.online(), 64).ToString() == "0-63");
  // A node's worth with node 0 partly used: the first whole free node, node 1.
  CHECK(Take(layout, Parse("2-127"), 32).ToString() == "32-63");
  // 40 CPUs: node 0 whole, then 8 more from its socket sibling, node 1.
  CHECK(Take(layout, layout.online(), 40).ToString() == "0-39");
}

TEST_CASE("pack before spread: the node with the fewest free CPUs that still fits",
          "[cpu][exclusive]") {
  const CpuLayout layout(FakeTopology("4x32smt"));
  // Node 0 has 8 free (24-31), node 2 has 16 free (80-95), nodes 1 and 3 all 32.
  const CpuSet available = Parse("24-31,32-63,80-95,96-127");
  CHECK(Take(layout, available, 8).ToString() == "24-31");
  CHECK(Take(layout, available, 10).ToString() == "80-89");
  // Nothing smaller fits 20: a full node is the tightest fit.
  CHECK(Take(layout, available, 20).ToString() == "32-51");
}

TEST_CASE("without SMT every CPU is a core", "[cpu][exclusive]") {
  const CpuLayout layout(FakeTopology("nosmt"));
  CHECK(layout.threads_per_core() == 1);
  CHECK(Take(layout, layout.online(), 3).ToString() == "0-2");
  CHECK(Take(layout, Parse("1,3,5-15"), 2).ToString() == "1,3");
}

TEST_CASE("asking for more than is available fails and names both numbers", "[cpu][exclusive]") {
  const CpuLayout layout(FakeTopology("nosmt"));
  auto taken = TakeExclusiveCpus(layout, Parse("0-3"), 5);
  REQUIRE_FALSE(taken.ok());
  CHECK(taken.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(taken.status().message(), Catch::Contains("5 exclusive CPUs needed, 4 available"));
}

}  // namespace
}  // namespace qrm::cpu::testing
