// TakeExclusiveCpus: whole sockets/nodes, then whole cores, then threads; pack before spread.
#include "plugins/cpu/exclusive_cpus.h"

#include "tests/unit/plugins/cpu/cpu_test_util.h"

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

// Issue 12 item 7: three ways the packing did worse than the kubelet's takeByTopologyNUMAPacked.
TEST_CASE("an odd request's last thread stays on the node that holds the rest",
          "[cpu][exclusive][packing]") {
  const CpuLayout layout(FakeTopology("snc4"));  // 1 socket, nodes of 8, siblings 2k, 2k+1
  // Node 3 (30-31) has the fewest free CPUs but cannot take 3; nodes 0 (2-5) and 2 (20-23)
  // can. Counting only the whole-core part (2) used to pick node 3: 2,30-31 on two nodes.
  const CpuSet taken = Take(layout, Parse("2-5,8-15,20-23,30-31"), 3);
  CHECK(taken.ToString() == "2-4");
  CHECK(layout.NodesOf(taken).Count() == 1);
}

TEST_CASE("the single threads stay where the rest is", "[cpu][exclusive][packing]") {
  // 2 sockets x 2 nodes x 12 cores, cpu i and i+48 share a core: free whole cores 11/59 and
  // 23/71 (socket 0) and 31-35/79-83 (node 2, socket 1), plus 78 (its sibling 30 is busy).
  const CpuLayout layout(FakeTopology("intel96"));
  const CpuSet taken = Take(layout, Parse("11,23,31-35,59,71,78-83"), 3);
  // Used to be 11,59,78: node 0's core, then a thread from the other socket. The kubelet gives
  // 11,23,59 (two nodes of socket 0); node 2 alone can hold all three, filling the half-used
  // core of 78 first.
  CHECK(taken.ToString() == "31,78-79");
  CHECK(layout.NodesOf(taken).Count() == 1);
}

TEST_CASE("a core whose sibling is offline is not a whole core", "[cpu][exclusive][packing]") {
  // 2 sockets x 4 nodes x 4 cores, cpu i and i+32 share a core; 38 is offline, so 6 is a core
  // of one thread (node 1). Node 0 has 0/32 whole and 1 (sibling 33 busy).
  const CpuLayout layout(FakeTopology("snc4x2off"));
  REQUIRE(layout.cores()[layout.CoreOf(6)].threads == CpuSet{6});
  // 6 used to count as a free whole core and took the last CPU to node 1: 0,6,32.
  const CpuSet taken = Take(layout, Parse("0-1,6,32,16-19,48-51"), 3);
  CHECK(taken.ToString() == "0-1,32");
  CHECK(layout.NodesOf(taken).Count() == 1);
  // Asked for one CPU, the lone thread 6 is as good as 1 (neither breaks a whole core); the
  // tighter node wins.
  CHECK(Take(layout, Parse("1,6,32-33"), 1).ToString() == "6");
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
