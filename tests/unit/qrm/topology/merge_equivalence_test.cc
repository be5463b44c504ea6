// Randomized equivalence of the fast Merge and the kubelet's brute force
// (brute_force_merge.h): identical best hint and admit decision on every generated input.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "qrm/topology/merge.h"
#include "testing/topology/brute_force_merge.h"
#include "tests/unit/qrm/topology/topology_test_util.h"

namespace qrm::topology {
namespace {

constexpr Policy kAllPolicies[] = {Policy::kNone, Policy::kBestEffort, Policy::kRestricted,
                                   Policy::kSingleNumaNode};

struct Shape {
  int min_nodes = 1;
  int max_nodes = 6;
  bool allow_sparse = true;
  int max_providers = 4;
  int max_resources = 3;
  int max_hints = 6;
  uint64_t max_permutations = 3000;
};

struct Case {
  std::vector<int> ids;
  std::vector<std::vector<uint32_t>> distances;
  ProvidersHints providers;
};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  std::mt19937_64& rng() { return rng_; }

  Case Next(const Shape& shape) {
    Case c;
    const int n = Uniform(shape.min_nodes, shape.max_nodes);
    c.ids = NodeIds(n, shape.allow_sparse);
    c.distances = Distances(n);
    uint64_t all = 0;
    for (int id : c.ids) all |= uint64_t{1} << id;

    // A small pool of masks that hints reuse, so that providers often agree.
    std::vector<uint64_t> pool(static_cast<std::size_t>(Uniform(1, 5)));
    for (uint64_t& mask : pool) mask = RandomMask(c.ids, all);

    const int providers = Uniform(1, shape.max_providers);
    static const char* const kResources[] = {"cpu", "memory", "gpu", "nic"};
    for (int p = 0; p < providers; ++p) {
      ResourceHints provider;
      if (!Chance(0.08)) {
        const int resources = Uniform(1, shape.max_resources);
        for (int r = 0; r < resources; ++r) {
          provider[kResources[Uniform(0, 3)]] = HintList(c.ids, all, pool, shape);
        }
      }
      c.providers.push_back(std::move(provider));
    }
    Cap(c.providers, shape.max_permutations);
    return c;
  }

 private:
  std::vector<int> NodeIds(int n, bool allow_sparse) {
    const int layout = allow_sparse ? Uniform(0, 9) : 0;
    if (layout < 5) {
      std::vector<int> ids;
      for (int i = 0; i < n; ++i) ids.push_back(i);
      return ids;
    }
    // Sparse ids, below 8 (dense bitmap path) or anywhere below 64 (hash set path).
    const int universe = layout < 8 ? std::max(8, n) : 64;
    std::vector<int> all(static_cast<std::size_t>(universe));
    for (int i = 0; i < universe; ++i) all[static_cast<std::size_t>(i)] = i;
    std::shuffle(all.begin(), all.end(), rng_);
    all.resize(static_cast<std::size_t>(n));
    return all;  // Deliberately unsorted: NumaInfo accepts any order.
  }

  std::vector<std::vector<uint32_t>> Distances(int n) {
    // Few distinct values, so that equal average distances (the tie-break) happen.
    static const uint32_t kFar[] = {11, 12, 20, 21, 30};
    std::vector<std::vector<uint32_t>> d(static_cast<std::size_t>(n),
                                         std::vector<uint32_t>(static_cast<std::size_t>(n)));
    for (int i = 0; i < n; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      d[ui][ui] = Chance(0.8) ? 10 : 11;
      for (int j = 0; j < i; ++j) {
        const auto uj = static_cast<std::size_t>(j);
        d[ui][uj] = d[uj][ui] = kFar[Uniform(0, 4)];
      }
    }
    return d;
  }

  uint64_t RandomMask(const std::vector<int>& ids, uint64_t all) {
    if (Chance(0.04)) return 0;  // A hint with an empty, non-nil mask.
    const double density = Chance(0.5) ? 0.5 : 0.3;
    uint64_t mask = 0;
    for (int id : ids) {
      if (Chance(density)) mask |= uint64_t{1} << id;
    }
    if (mask == 0 && Chance(0.7))
      mask = uint64_t{1}
             << ids[static_cast<std::size_t>(Uniform(0, static_cast<int>(ids.size()) - 1))];
    if (Chance(0.08) && all != ~uint64_t{0}) {
      // A node this machine does not have.
      int outside;
      do outside = Uniform(0, 63);
      while ((all >> outside) & 1U);
      mask |= uint64_t{1} << outside;
    }
    return mask;
  }

  std::optional<std::vector<TopologyHint>> HintList(const std::vector<int>& ids, uint64_t all,
                                                    const std::vector<uint64_t>& pool,
                                                    const Shape& shape) {
    if (Chance(0.1)) return std::nullopt;
    if (Chance(0.1)) return std::vector<TopologyHint>{};
    const int length = Chance(0.1) ? Uniform(1, 2 * shape.max_hints) : Uniform(1, shape.max_hints);
    std::vector<TopologyHint> hints;
    for (int i = 0; i < length; ++i) {
      TopologyHint hint;
      if (!Chance(0.08)) {
        hint.affinity = NumaMask::FromBits(
            Chance(0.75)
                ? pool[static_cast<std::size_t>(Uniform(0, static_cast<int>(pool.size()) - 1))]
                : RandomMask(ids, all));
      }
      hints.push_back(hint);
    }
    // Preferred flags: random, "narrowest are preferred" as providers do, or all preferred.
    const int mode = Uniform(0, 9);
    int narrowest = 65;
    for (const TopologyHint& h : hints) {
      if (h.affinity.has_value()) narrowest = std::min(narrowest, h.affinity->Count());
    }
    for (TopologyHint& h : hints) {
      if (mode < 4) {
        h.preferred = Chance(0.5);
      } else if (mode < 8) {
        h.preferred = !h.affinity.has_value() || h.affinity->Count() == narrowest;
      } else {
        h.preferred = true;
      }
    }
    return hints;
  }

  // Shrinks the longest lists until the brute force has at most `cap` permutations.
  static void Cap(ProvidersHints& providers, uint64_t cap) {
    for (;;) {
      uint64_t total = 1;
      std::vector<TopologyHint>* longest = nullptr;
      for (ResourceHints& provider : providers) {
        for (auto& [name, list] : provider) {
          if (!list.has_value() || list->empty()) continue;
          total *= list->size();
          if (longest == nullptr || list->size() > longest->size()) longest = &*list;
        }
      }
      if (total <= cap) return;
      longest->pop_back();
    }
  }

  std::mt19937_64 rng_;
};

// What kind of answer a case produced, to check the generator covers every path.
struct Coverage {
  int preferred = 0;
  int width_equal_b = 0;
  int width_below_b = 0;
  int width_above_b = 0;
  int single_numa_admitted = 0;
  int single_numa_rejected = 0;
  int closest = 0;
};

void Record(Coverage& coverage, Policy policy, const PolicyOptions& options, const Case& c,
            const MergeResult& result) {
  if (options.prefer_closest_numa_nodes) ++coverage.closest;
  if (policy == Policy::kSingleNumaNode) {
    ++(result.admit ? coverage.single_numa_admitted : coverage.single_numa_rejected);
  }
  if (policy != Policy::kBestEffort) return;
  if (result.best.preferred) {
    ++coverage.preferred;
    return;
  }
  const int b = reference::MaxOfMinAffinityCounts(reference::FilterProvidersHints(c.providers));
  const int width = result.best.affinity->Count();
  ++(width == b ? coverage.width_equal_b
                : (width < b ? coverage.width_below_b : coverage.width_above_b));
}

std::string Describe(const Case& c, Policy policy, const PolicyOptions& options) {
  std::string text = "policy " + std::to_string(static_cast<int>(policy)) +
                     (options.prefer_closest_numa_nodes ? " closest" : "") + "\nnodes:";
  for (int id : c.ids) text += " " + std::to_string(id);
  text += "\ndistances:";
  for (const auto& row : c.distances) {
    text += "\n ";
    for (uint32_t d : row) text += " " + std::to_string(d);
  }
  for (std::size_t p = 0; p < c.providers.size(); ++p) {
    text += "\nprovider " + std::to_string(p) + ":";
    if (c.providers[p].empty()) text += " (no map)";
    for (const auto& [name, list] : c.providers[p]) {
      text += "\n  " + name + ":";
      if (!list.has_value()) {
        text += " absent";
        continue;
      }
      if (list->empty()) text += " empty";
      for (const TopologyHint& h : *list) text += " " + h.ToString();
    }
  }
  return text;
}

// Runs one case under every policy; returns the number of comparisons made.
int CheckCase(const Case& c, bool closest, Coverage& coverage) {
  const NumaInfo numa = testing::Machine(c.ids, c.distances);
  const PolicyOptions options{.prefer_closest_numa_nodes = closest};
  int compared = 0;
  for (Policy policy : kAllPolicies) {
    const MergeResult expected = reference::BruteForceMerge(policy, options, numa, c.providers);
    StatusOr<MergeResult> actual = Merge(policy, options, numa, c.providers);
    REQUIRE(actual.ok());
    if (!(*actual == expected)) {
      INFO(Describe(c, policy, options));
      REQUIRE(*actual == expected);
    }
    Record(coverage, policy, options, c, expected);
    ++compared;
  }
  return compared;
}

TEST_CASE("Merge equals the kubelet brute force on 100000 random cases",
          "[topology][equivalence]") {
  Generator gen(0x70901061);
  const Shape shape;
  Coverage coverage;
  int compared = 0;
  constexpr int kCases = 100'000;
  for (int i = 0; i < kCases; ++i) {
    const Case c = gen.Next(shape);
    compared += CheckCase(c, gen.Chance(0.5), coverage);
  }
  CHECK(compared == 4 * kCases);
  // Every branch of the kubelet's compare is exercised many times.
  CHECK(coverage.preferred > 5'000);
  CHECK(coverage.width_equal_b > 5'000);
  CHECK(coverage.width_below_b > 1'000);
  CHECK(coverage.width_above_b > 1'000);
  CHECK(coverage.single_numa_admitted > 5'000);
  CHECK(coverage.single_numa_rejected > 5'000);
  CHECK(coverage.closest > 100'000);
}

TEST_CASE("Merge equals the kubelet brute force on 8-node machines with long lists",
          "[topology][equivalence]") {
  Generator gen(0x8888);
  Shape shape;
  shape.min_nodes = 8;
  shape.max_nodes = 8;
  shape.allow_sparse = false;
  shape.max_hints = 40;
  shape.max_permutations = 50'000;
  Coverage coverage;
  for (int i = 0; i < 1'500; ++i) CheckCase(gen.Next(shape), gen.Chance(0.5), coverage);
  CHECK(coverage.preferred > 50);
  CHECK(coverage.width_equal_b + coverage.width_below_b + coverage.width_above_b > 200);
}

TEST_CASE("Merge equals the kubelet brute force on 64-node machines", "[topology][equivalence]") {
  Generator gen(0x6464);
  Shape shape;
  shape.min_nodes = 33;
  shape.max_nodes = 64;
  shape.allow_sparse = false;
  shape.max_hints = 10;
  shape.max_permutations = 5'000;
  Coverage coverage;
  for (int i = 0; i < 3'000; ++i) CheckCase(gen.Next(shape), gen.Chance(0.5), coverage);
  CHECK(coverage.preferred > 100);
  CHECK(coverage.width_below_b > 100);
}

// Long lists of uniformly random 64-bit masks: the branch-and-bound search's hardest ground
// (no preferred candidate, many distinct partial ANDs), small enough for the brute force.
TEST_CASE("Merge equals the kubelet brute force on long lists of random 64-bit masks",
          "[topology][equivalence]") {
  Generator gen(0xAD5E);
  std::vector<int> ids;
  for (int i = 0; i < 64; ++i) ids.push_back(i);
  Coverage coverage;
  for (int i = 0; i < 16; ++i) {
    Case c;
    c.ids = ids;
    const int lists = gen.Uniform(2, 4);
    const int length = lists == 2 ? 800 : (lists == 3 ? 90 : 28);
    for (int l = 0; l < lists; ++l) {
      // Mostly half-dense masks; sometimes one denser list, which pushes B up so that no
      // width-B result exists and the search has to settle for the widest narrower one.
      const double density = gen.Chance(0.3) ? 0.8 : 0.5;
      std::vector<TopologyHint> hints;
      for (int h = 0; h < length; ++h) {
        uint64_t mask = 0;
        for (int b = 0; b < 64; ++b) {
          if (gen.Chance(density)) mask |= uint64_t{1} << b;
        }
        hints.push_back(TopologyHint::Of(NumaMask::FromBits(mask), gen.Chance(0.02)));
      }
      c.providers.push_back({{"r", hints}});
    }
    c.distances.assign(64, std::vector<uint32_t>(64, 21));
    for (int a = 0; a < 64; ++a) {
      for (int b = 0; b < a; ++b) {
        c.distances[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] =
            c.distances[static_cast<std::size_t>(b)][static_cast<std::size_t>(a)] =
                static_cast<uint32_t>(gen.Uniform(11, 40));
      }
      c.distances[static_cast<std::size_t>(a)][static_cast<std::size_t>(a)] = 10;
    }
    CheckCase(c, gen.Chance(0.5), coverage);
  }
  CHECK(coverage.width_equal_b + coverage.width_below_b > 8);
}

// The fold of the kubelet's compare is order independent (see merge.h), so Go's random map
// order does not matter: shuffling providers, resources and hints changes neither the brute
// force's nor the fast answer.
TEST_CASE("the result does not depend on provider or resource or hint order",
          "[topology][equivalence]") {
  Generator gen(0x5eed);
  const Shape shape;
  for (int i = 0; i < 5'000; ++i) {
    const Case original = gen.Next(shape);
    Case shuffled = original;
    std::shuffle(shuffled.providers.begin(), shuffled.providers.end(), gen.rng());
    for (ResourceHints& provider : shuffled.providers) {
      // Renaming resources reorders the map.
      ResourceHints renamed;
      for (auto& [name, list] : provider) {
        if (list.has_value()) std::shuffle(list->begin(), list->end(), gen.rng());
        renamed[std::to_string(gen.Uniform(0, 1'000'000)) + name] = list;
      }
      provider = std::move(renamed);
    }
    const NumaInfo numa = testing::Machine(original.ids, original.distances);
    const PolicyOptions options{.prefer_closest_numa_nodes = gen.Chance(0.5)};
    for (Policy policy : kAllPolicies) {
      const MergeResult a = reference::BruteForceMerge(policy, options, numa, original.providers);
      const MergeResult b = reference::BruteForceMerge(policy, options, numa, shuffled.providers);
      StatusOr<MergeResult> fast = Merge(policy, options, numa, shuffled.providers);
      REQUIRE(fast.ok());
      if (!(a == b) || !(*fast == a)) {
        INFO(Describe(original, policy, options));
        REQUIRE(a == b);
        REQUIRE(*fast == a);
      }
    }
  }
}

}  // namespace
}  // namespace qrm::topology
