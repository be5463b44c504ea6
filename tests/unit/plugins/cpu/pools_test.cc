// Pool carving: reserved by count, the reclaimed pool from the highest ids, sizes refused.
#include "plugins/cpu/pools.h"

#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

CpuPools PoolsOk(const CpuLayout& layout, const CpuSet& reserved, const CpuSet& dedicated,
                 int size) {
  auto pools = ComputePools(layout, reserved, dedicated, size);
  INFO(pools.status().ToString());
  REQUIRE(pools.ok());
  // The four pools partition the machine.
  CHECK(pools->reserved.Union(pools->dedicated).Union(pools->reclaimed).Union(pools->shared) ==
        layout.online());
  CHECK_FALSE(pools->reclaimed.Overlaps(pools->shared));
  CHECK_FALSE(pools->reclaimed.Overlaps(pools->dedicated.Union(pools->reserved)));
  CHECK(pools->reclaimed.Size() == size);
  return *pools;
}

TEST_CASE("the reclaimed pool takes whole cores from the highest ids of every node",
          "[cpu][pools]") {
  const CpuLayout layout(FakeTopology("doc80"));
  CHECK(PoolsOk(layout, {}, {}, 4).reclaimed.ToString() == "38-39,78-79");
  CHECK(PoolsOk(layout, {}, {}, 52).reclaimed.ToString() == "14-39,54-79");
  // Three cores do not split evenly: the extra core goes to the highest node.
  CHECK(PoolsOk(layout, {}, {}, 6).reclaimed.ToString() == "38-39,76-79");
  // An odd size ends with one thread.
  CHECK(PoolsOk(layout, {}, {}, 5).reclaimed.ToString() == "38-39,77-79");
  // Dedicated CPUs at the top push the pool down.
  auto dedicated = CpuSet::Parse("70-79");
  REQUIRE(dedicated.ok());
  CHECK(PoolsOk(layout, {}, *dedicated, 4).reclaimed.ToString() == "38-39,68-69");
}

TEST_CASE("a node without free CPUs leaves its share to the others", "[cpu][pools]") {
  const CpuLayout layout(FakeTopology("4x32smt"));
  auto dedicated = CpuSet::Parse("96-127");  // node 3 fully dedicated
  REQUIRE(dedicated.ok());
  CHECK(PoolsOk(layout, {}, *dedicated, 8).reclaimed.ToString() == "30-31,62-63,92-95");
}

TEST_CASE("memory-only nodes get no share", "[cpu][pools]") {
  const CpuLayout layout(FakeTopology("memonly"));
  CHECK(layout.cpu_nodes() == std::vector<int>{0});
  CHECK(PoolsOk(layout, {}, {}, 4).reclaimed.ToString() == "12-15");
}

TEST_CASE("reserved CPUs by count: whole cores, spread, lowest ids", "[cpu][pools]") {
  const CpuLayout doc(FakeTopology("doc80"));
  CHECK(TakeSpread(doc, doc.online(), 4, TakeOrder::kLowestFirst).ToString() == "0-1,40-41");
  CHECK(TakeSpread(doc, doc.online(), 2, TakeOrder::kLowestFirst).ToString() == "0-1");
  const CpuLayout four(FakeTopology("4x32smt"));
  CHECK(TakeSpread(four, four.online(), 8, TakeOrder::kLowestFirst).ToString() ==
        "0-1,32-33,64-65,96-97");
}

TEST_CASE("pool sizes that leave no shared CPU are refused; size 0 shares the shared pool",
          "[cpu][pools]") {
  const CpuLayout layout(FakeTopology("nosmt"));  // 16 CPUs
  auto negative = ComputePools(layout, {}, {}, -1);
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(negative.status().message(), Catch::Contains("reclaimed: pool size -1"));
  const CpuPools zero = PoolsOk(layout, {}, {}, 0);
  CHECK(zero.reclaimed.Empty());
  CHECK(zero.shared == layout.online());
  auto all = ComputePools(layout, {}, {}, 16);
  REQUIRE_FALSE(all.ok());
  CHECK(all.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(all.status().message(), Catch::Contains("reclaimed: pool size 16 is above 15"));
  CHECK(PoolsOk(layout, {}, {}, 15).shared.ToString() == "0");
}

}  // namespace
}  // namespace qrm::cpu::testing
