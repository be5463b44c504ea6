// The two reclaimable formulas against hand-computed values.
#include "advisor/predict/reclaimable.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

TEST_CASE("Mid allocatable: min(reclaimable, threshold), plus unallocated when mixed",
          "[advisor][reclaimable]") {
  MidOptions o;
  // 32 cores, Prod asked for 24 and is predicted to peak at 10: 14 reclaimable.
  CHECK(MidAllocatable(32, 24, 10, o) == Approx(14));
  o.threshold_ratio = 0.25;  // at most 8
  CHECK(MidAllocatable(32, 24, 10, o) == Approx(8));
  o.include_unallocated = true;  // + (32 - 24)
  CHECK(MidAllocatable(32, 24, 10, o) == Approx(16));
  o = MidOptions{};
  o.reclaim_ratio = 0.5;  // 12 - 10
  CHECK(MidAllocatable(32, 24, 10, o) == Approx(2));
  CHECK(MidAllocatable(32, 24, 30, MidOptions{}) == 0);  // peak above the requests
}

TEST_CASE("batch allocatable (usage policy): capacity less margin, system and Prod usage",
          "[advisor][reclaimable]") {
  BatchUsageOptions o;  // 60 %: the safety margin is 40 % of capacity
  // 100 cores; node uses 50 of which pods 45 (system 5); Prod uses 30.
  CHECK(BatchAllocatableUsage(100, 50, 45, 30, o) == Approx(100 - 40 - 5 - 30));
  o.node_reserved = 8;  // system counts at least what the node reserves
  CHECK(BatchAllocatableUsage(100, 50, 45, 30, o) == Approx(100 - 40 - 8 - 30));
  CHECK(BatchAllocatableUsage(100, 99, 10, 90, o) == 0);
}

}  // namespace
}  // namespace qrm::advisor
