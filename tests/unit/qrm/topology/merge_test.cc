// Hand-written cases of the kubelet topology manager's documented behaviour. Every case is also
// checked against the brute-force reference.
#include "qrm/topology/merge.h"

#include <catch2/catch.hpp>

#include "testing/topology/brute_force_merge.h"
#include "tests/unit/qrm/topology/topology_test_util.h"

namespace qrm::topology {
namespace {

using testing::Machine;
using testing::Mask;
using testing::NonPreferred;
using testing::Preferred;

constexpr Policy kAllPolicies[] = {Policy::kNone, Policy::kBestEffort, Policy::kRestricted,
                                   Policy::kSingleNumaNode};

MergeResult Run(Policy policy, const NumaInfo& numa, const ProvidersHints& providers,
                PolicyOptions options = {}) {
  StatusOr<MergeResult> fast = Merge(policy, options, numa, providers);
  REQUIRE(fast.ok());
  const MergeResult reference = reference::BruteForceMerge(policy, options, numa, providers);
  CHECK(*fast == reference);
  return *fast;
}

MergeResult Result(TopologyHint best, bool admit) {
  return MergeResult{best, admit};
}

TEST_CASE("none admits everything without a preference", "[topology][merge]") {
  const NumaInfo numa = Machine({0, 1});
  const ProvidersHints cannot = {{{"cpu", std::vector<TopologyHint>{}}}};
  CHECK(Run(Policy::kNone, numa, cannot) == Result(TopologyHint::Any(false), true));
  CHECK(Run(Policy::kNone, numa, {{{"cpu", std::vector{Preferred({1})}}}}) ==
        Result(TopologyHint::Any(false), true));
}

TEST_CASE("absent hints mean no preference and an empty list cannot be satisfied",
          "[topology][merge]") {
  const NumaInfo numa = Machine({0, 1});
  const TopologyHint all_preferred = Preferred({0, 1});

  // No provider at all, a provider with no map, a resource with an absent list.
  for (const ProvidersHints& none_cares : {ProvidersHints{}, ProvidersHints{ResourceHints{}},
                                           ProvidersHints{{{"cpu", std::nullopt}}}}) {
    CHECK(Run(Policy::kBestEffort, numa, none_cares) == Result(all_preferred, true));
    CHECK(Run(Policy::kRestricted, numa, none_cares) == Result(all_preferred, true));
    // single-numa-node turns the all-node affinity into "any".
    CHECK(Run(Policy::kSingleNumaNode, numa, none_cares) == Result(TopologyHint::Any(true), true));
  }

  // An empty list: best-effort still admits (with the all-node mask), the others reject.
  const ProvidersHints cannot = {{{"cpu", std::vector<TopologyHint>{}}}};
  CHECK(Run(Policy::kBestEffort, numa, cannot) == Result(NonPreferred({0, 1}), true));
  CHECK(Run(Policy::kRestricted, numa, cannot) == Result(NonPreferred({0, 1}), false));
  CHECK(Run(Policy::kSingleNumaNode, numa, cannot) == Result(TopologyHint::Any(false), false));

  // An empty list poisons preference even when another resource has a perfect hint.
  const ProvidersHints mixed = {{{"cpu", std::vector{Preferred({0})}}},
                                {{"gpu", std::vector<TopologyHint>{}}}};
  CHECK(Run(Policy::kBestEffort, numa, mixed) == Result(NonPreferred({0}), true));
  CHECK(Run(Policy::kRestricted, numa, mixed) == Result(NonPreferred({0}), false));
}

TEST_CASE("preferred merge needs the same mask from every provider", "[topology][merge]") {
  const NumaInfo numa = Machine({0, 1});
  // Two providers preferring {0} and {0,1}: the AND is {0}, but the masks differ, so the
  // merged hint is not preferred (kubelet >= 1.26 semantics).
  const ProvidersHints providers = {{{"cpu", std::vector{Preferred({0})}}},
                                    {{"gpu", std::vector{Preferred({0, 1})}}}};
  CHECK(Run(Policy::kBestEffort, numa, providers) == Result(NonPreferred({0}), true));
  CHECK(Run(Policy::kRestricted, numa, providers) == Result(NonPreferred({0}), false));

  // Both offer {0} and {1} preferred and {0,1} not: the narrowest common preferred mask.
  const std::vector<TopologyHint> either = {Preferred({0}), Preferred({1}), NonPreferred({0, 1})};
  const ProvidersHints aligned = {{{"cpu", either}}, {{"gpu", either}}};
  CHECK(Run(Policy::kRestricted, numa, aligned) == Result(Preferred({0}), true));
  // One of them can only use node 1.
  const ProvidersHints only_one = {{{"cpu", either}},
                                   {{"gpu", std::vector{Preferred({1}), NonPreferred({0, 1})}}}};
  CHECK(Run(Policy::kRestricted, numa, only_one) == Result(Preferred({1}), true));
  // A preferred "any" hint goes with whatever the others prefer.
  const ProvidersHints with_any = {{{"cpu", std::vector{TopologyHint::Any(true)}}},
                                   {{"gpu", std::vector{Preferred({1})}}}};
  CHECK(Run(Policy::kRestricted, numa, with_any) == Result(Preferred({1}), true));
}

TEST_CASE("restricted rejects the best hint when it is not preferred", "[topology][merge]") {
  const NumaInfo numa = Machine({0, 1});
  const ProvidersHints providers = {
      {{"cpu", std::vector{Preferred({0}), NonPreferred({0, 1})}}},
      {{"memory", std::vector{Preferred({1}), NonPreferred({0, 1})}}}};
  CHECK(Run(Policy::kBestEffort, numa, providers) == Result(NonPreferred({0}), true));
  CHECK(Run(Policy::kRestricted, numa, providers) == Result(NonPreferred({0}), false));
}

TEST_CASE("single-numa-node only accepts preferred single-node hints", "[topology][merge]") {
  const NumaInfo numa = Machine({0, 1});
  // A request that only fits on two nodes is rejected.
  const ProvidersHints two_nodes = {{{"cpu", std::vector{Preferred({0, 1})}}}};
  CHECK(Run(Policy::kSingleNumaNode, numa, two_nodes) == Result(TopologyHint::Any(false), false));
  CHECK(Run(Policy::kRestricted, numa, two_nodes) == Result(Preferred({0, 1}), true));
  // Non-preferred single-node hints do not count either.
  const ProvidersHints non_preferred = {{{"cpu", std::vector{NonPreferred({0})}}}};
  CHECK(Run(Policy::kSingleNumaNode, numa, non_preferred) ==
        Result(TopologyHint::Any(false), false));
  // The providers agree on node 1.
  const ProvidersHints agree = {{{"cpu", std::vector{Preferred({0}), Preferred({1})}}},
                                {{"gpu", std::vector{Preferred({1}), Preferred({0, 1})}}}};
  CHECK(Run(Policy::kSingleNumaNode, numa, agree) == Result(Preferred({1}), true));
  // They do not agree.
  const ProvidersHints disagree = {{{"cpu", std::vector{Preferred({0})}}},
                                   {{"gpu", std::vector{Preferred({1})}}}};
  CHECK(Run(Policy::kSingleNumaNode, numa, disagree) == Result(TopologyHint::Any(false), false));
  // On a one-node machine the only node is the default affinity, hence "any".
  const NumaInfo single = Machine({0});
  CHECK(Run(Policy::kSingleNumaNode, single, {{{"cpu", std::vector{Preferred({0})}}}}) ==
        Result(TopologyHint::Any(true), true));
}

TEST_CASE("non-preferred choice is relative to the widest narrowest hint", "[topology][merge]") {
  const NumaInfo numa = Machine({0, 1, 2, 3});
  // B = 2: a width-2 result beats the narrower {0}.
  const ProvidersHints tier0 = {
      {{"cpu", std::vector{NonPreferred({0, 1}), NonPreferred({0, 1, 2, 3})}}},
      {{"gpu", std::vector{NonPreferred({0, 1, 2, 3}), NonPreferred({0, 2})}}}};
  CHECK(Run(Policy::kBestEffort, numa, tier0) == Result(NonPreferred({0, 1}), true));

  // B = 4 and no width-4 result: the widest below B wins, not the narrowest.
  const ProvidersHints tier1 = {
      {{"cpu", std::vector{NonPreferred({0, 1, 2, 3})}}},
      {{"gpu", std::vector{NonPreferred({0, 1}), NonPreferred({0, 2, 3})}}}};
  CHECK(Run(Policy::kBestEffort, numa, tier1) == Result(NonPreferred({0, 2, 3}), true));

  // B = 1 and only wider results: the narrowest of them.
  const NumaInfo five = Machine({0, 1, 2, 3, 4});
  const ProvidersHints tier2 = {
      {{"cpu", std::vector{NonPreferred({0}), NonPreferred({1, 2, 3})}}},
      {{"gpu", std::vector{NonPreferred({4}), NonPreferred({1, 2, 3}), NonPreferred({1, 2})}}}};
  CHECK(Run(Policy::kBestEffort, five, tier2) == Result(NonPreferred({1, 2}), true));

  // Preferred always wins, however wide.
  const ProvidersHints preferred_wins = {
      {{"cpu", std::vector{NonPreferred({0}), Preferred({0, 1, 2, 3})}}},
      {{"gpu", std::vector{NonPreferred({0}), Preferred({0, 1, 2, 3})}}}};
  CHECK(Run(Policy::kRestricted, numa, preferred_wins) == Result(Preferred({0, 1, 2, 3}), true));
}

TEST_CASE("masks outside the machine are cut to its nodes", "[topology][merge]") {
  const NumaInfo numa = Machine({0, 2, 5});  // Sparse ids.
  // {1} is no node of this machine: its merge is empty and never chosen.
  const ProvidersHints providers = {{{"cpu", std::vector{Preferred({1}), NonPreferred({1, 2})}}}};
  CHECK(Run(Policy::kBestEffort, numa, providers) == Result(NonPreferred({2}), true));
  const ProvidersHints only_outside = {{{"cpu", std::vector{Preferred({1})}}}};
  CHECK(Run(Policy::kBestEffort, numa, only_outside) == Result(NonPreferred({0, 2, 5}), true));
  CHECK(Run(Policy::kSingleNumaNode, numa, only_outside) ==
        Result(TopologyHint::Any(false), false));
  // Preferred masks compare raw: {2,7} and {2} both cut to {2} but still differ.
  const ProvidersHints raw = {{{"cpu", std::vector{Preferred({2, 7})}}},
                              {{"gpu", std::vector{Preferred({2})}}}};
  CHECK(Run(Policy::kRestricted, numa, raw) == Result(NonPreferred({2}), false));
}

TEST_CASE("prefer-closest-numa-nodes picks the smaller average distance", "[topology][merge]") {
  // Node 0 is close to node 2 and far from node 1.
  const NumaInfo numa = Machine({0, 1, 2, 3}, {{10, 30, 12, 30},  //
                                               {30, 10, 30, 12},
                                               {12, 30, 10, 30},
                                               {30, 12, 30, 10}});
  const std::vector<TopologyHint> pairs = {Preferred({0, 1}), Preferred({0, 2}),
                                           NonPreferred({0, 1, 2, 3})};
  const ProvidersHints providers = {{{"cpu", pairs}}, {{"memory", pairs}}};
  CHECK(Run(Policy::kBestEffort, numa, providers) == Result(Preferred({0, 1}), true));
  CHECK(Run(Policy::kBestEffort, numa, providers, {.prefer_closest_numa_nodes = true}) ==
        Result(Preferred({0, 2}), true));
  // Still narrower first: a single node beats any pair.
  const ProvidersHints narrow = {{{"cpu", std::vector{Preferred({3}), Preferred({0, 2})}}}};
  CHECK(Run(Policy::kRestricted, numa, narrow, {.prefer_closest_numa_nodes = true}) ==
        Result(Preferred({3}), true));
  // Equal averages fall back to the lower mask.
  const ProvidersHints tie = {{{"cpu", std::vector{Preferred({1, 3}), Preferred({0, 2})}}}};
  CHECK(Run(Policy::kRestricted, numa, tie, {.prefer_closest_numa_nodes = true}) ==
        Result(Preferred({0, 2}), true));
  // Non-preferred results use the same order.
  const ProvidersHints non_preferred = {
      {{"cpu", std::vector{NonPreferred({0, 1}), NonPreferred({0, 2})}}},
      {{"gpu", std::vector{NonPreferred({0, 1, 2, 3})}}}};
  CHECK(Run(Policy::kBestEffort, numa, non_preferred, {.prefer_closest_numa_nodes = true}) ==
        Result(NonPreferred({0, 2}), true));
  // single-numa-node ignores the option.
  CHECK(Run(Policy::kSingleNumaNode, numa, providers, {.prefer_closest_numa_nodes = true}) ==
        Result(TopologyHint::Any(false), false));
}

TEST_CASE("prefer-closest-numa-nodes needs distances", "[topology][merge]") {
  const NumaInfo numa = Machine({0, 1});
  for (Policy policy : kAllPolicies) {
    StatusOr<MergeResult> result = Merge(policy, {.prefer_closest_numa_nodes = true}, numa, {});
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == StatusCode::kFailedPrecondition);
    CHECK_THAT(result.status().message(), Catch::Contains("prefer-closest-numa-nodes"));
  }
}

TEST_CASE("64 NUMA nodes", "[topology][merge]") {
  std::vector<int> ids;
  for (int i = 0; i < 64; ++i) ids.push_back(i);
  const NumaInfo numa = Machine(ids);
  CHECK(numa.DefaultAffinity().bits() == ~uint64_t{0});
  const ProvidersHints providers = {
      {{"cpu", std::vector{Preferred({63}), Preferred({40, 41}), NonPreferred({0, 40, 41, 63})}}},
      {{"gpu", std::vector{Preferred({40, 41}), NonPreferred({0, 63})}}}};
  CHECK(Run(Policy::kRestricted, numa, providers) == Result(Preferred({40, 41}), true));
  const ProvidersHints none_common = {
      {{"cpu", std::vector{Preferred({63}), NonPreferred({0, 40, 41, 63})}}},
      {{"gpu", std::vector{Preferred({40, 41}), NonPreferred({0, 63})}}}};
  // B = 2; {40,41} and {0,63} are both two nodes wide, {40,41} is the lower mask.
  CHECK(Run(Policy::kBestEffort, numa, none_common) == Result(NonPreferred({40, 41}), true));
}

TEST_CASE("NumaInfo validates nodes and distances", "[topology][numa_info]") {
  CHECK(NumaInfo::Create({}).status().code() == StatusCode::kInvalidArgument);
  StatusOr<NumaInfo> big = NumaInfo::Create({0, 64});
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.status().message(), Catch::Contains("64"));
  StatusOr<NumaInfo> twice = NumaInfo::Create({3, 1, 3});
  REQUIRE_FALSE(twice.ok());
  CHECK_THAT(twice.status().message(), Catch::Contains("3 is listed twice"));
  StatusOr<NumaInfo> rows = NumaInfo::Create({0, 1}, {{10, 20}});
  REQUIRE_FALSE(rows.ok());
  CHECK_THAT(rows.status().message(), Catch::Contains("1 rows for 2 nodes"));
  StatusOr<NumaInfo> cols = NumaInfo::Create({0, 1}, {{10, 20}, {20}});
  REQUIRE_FALSE(cols.ok());
  CHECK_THAT(cols.status().message(), Catch::Contains("node 1"));

  // Rows and columns follow the order of `nodes`, not of the ids.
  StatusOr<NumaInfo> info = NumaInfo::Create({5, 0}, {{10, 21}, {21, 11}});
  REQUIRE(info.ok());
  CHECK(info->nodes() == std::vector<int>{0, 5});
  CHECK(info->DefaultAffinity() == Mask({0, 5}));
  CHECK(info->Distance(5, 5) == 10);
  CHECK(info->Distance(0, 0) == 11);
  CHECK(info->Distance(0, 5) == 21);
  CHECK(info->Distance(0, 3) == 0);
  CHECK(info->DistanceSum(Mask({0, 5})) == 10 + 11 + 21 + 21);
}

TEST_CASE("TopologyHint::ToString", "[topology][merge]") {
  CHECK(Preferred({0, 1, 3}).ToString() == "{0-1,3 preferred}");
  CHECK(TopologyHint::Any(false).ToString() == "{any non-preferred}");
}

}  // namespace
}  // namespace qrm::topology
