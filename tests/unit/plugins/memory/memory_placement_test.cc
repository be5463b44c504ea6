// Placement and hints of the memory plugin on hand-built states, including machines wider
// than the full enumeration, checked against a brute force over every node subset.
#include "plugins/memory/memory_placement.h"

#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "plugins/memory/memory_config.h"

namespace qrm::memory {
namespace {

using Catch::Contains;

constexpr uint64_t kGiB = uint64_t{1} << 30;

MemoryState StateWithFree(const std::vector<uint64_t>& free_gib) {
  std::vector<NodeMemory> nodes;
  for (size_t i = 0; i < free_gib.size(); ++i) {
    nodes.push_back({static_cast<int>(i), free_gib[i] * kGiB, 0});
  }
  return MemoryState(std::move(nodes));
}

// Every fitting subset of `allowed` with the fewest nodes, by brute force.
std::set<uint64_t> NarrowestFitting(const MemoryState& state, NumaMask allowed, uint64_t bytes) {
  std::set<uint64_t> best;
  int narrowest = NumaMask::kMaxNodes + 1;
  const uint64_t all = allowed.bits();
  for (uint64_t s = all; s != 0; s = (s - 1) & all) {
    const NumaMask mask = NumaMask::FromBits(s);
    if (state.FreeOn(mask) < bytes) continue;
    if (mask.Count() < narrowest) {
      narrowest = mask.Count();
      best.clear();
    }
    if (mask.Count() == narrowest) best.insert(s);
  }
  return best;
}

TEST_CASE("up to 8 nodes: every fitting subset, the narrowest preferred", "[memory][placement]") {
  const MemoryState state = StateWithFree({10, 20, 30, 5, 5, 5, 5, 5});
  const std::vector<MemoryHint> hints = BoundHints(state, state.NodeMask(), 25 * kGiB);
  const std::set<uint64_t> narrowest = NarrowestFitting(state, state.NodeMask(), 25 * kGiB);
  REQUIRE(narrowest == std::set<uint64_t>{NumaMask().With(2).bits()});
  size_t fitting = 0;
  for (uint64_t s = 1; s < 256; ++s) fitting += state.FreeOn(NumaMask::FromBits(s)) >= 25 * kGiB;
  CHECK(hints.size() == fitting);
  CHECK(hints.front() == MemoryHint{NumaMask().With(2), true});
  for (const MemoryHint& h : hints) {
    CHECK(state.FreeOn(h.nodes) >= 25 * kGiB);
    CHECK(h.preferred == narrowest.contains(h.nodes.bits()));
  }
  // Narrowest first.
  CHECK(std::is_sorted(hints.begin(), hints.end(), [](const MemoryHint& a, const MemoryHint& b) {
    return a.nodes.IsNarrowerThan(b.nodes);
  }));
}

TEST_CASE("wide machines: the narrowest sets by pruned search, plus everything allowed",
          "[memory][placement]") {
  // 12 nodes: more than the full enumeration, still small enough to brute-force here.
  const MemoryState state = StateWithFree({8, 3, 8, 1, 2, 8, 4, 8, 2, 2, 6, 1});
  const NumaMask allowed = state.NodeMask();
  for (uint64_t gib : {5, 8, 12, 20, 30, 50}) {
    INFO(gib << " GiB");
    const uint64_t bytes = gib * kGiB;
    const std::vector<MemoryHint> hints = BoundHints(state, allowed, bytes);
    const std::set<uint64_t> narrowest = NarrowestFitting(state, allowed, bytes);
    std::set<uint64_t> preferred;
    for (const MemoryHint& h : hints) {
      CHECK(state.FreeOn(h.nodes) >= bytes);
      if (h.preferred) preferred.insert(h.nodes.bits());
    }
    if (narrowest.size() <= kMaxPreferredHints) {
      CHECK(preferred == narrowest);
    } else {
      CHECK(preferred.size() == kMaxPreferredHints);
      for (uint64_t p : preferred) CHECK(narrowest.contains(p));
    }
    // The only wider hint is the whole allowed set.
    const MemoryHint& last = hints.back();
    if (NumaMask::FromBits(*narrowest.begin()).Count() < allowed.Count()) {
      CHECK(last == MemoryHint{allowed, false});
    }
  }
  CHECK(BoundHints(state, allowed, 60 * kGiB).empty());  // 53 GiB free in all
}

TEST_CASE("a wide machine with 64 nodes answers quickly", "[memory][placement]") {
  std::vector<uint64_t> free(64, 1);
  const MemoryState state = StateWithFree(free);
  const std::vector<MemoryHint> hints = BoundHints(state, state.NodeMask(), 40 * kGiB);
  REQUIRE_FALSE(hints.empty());
  CHECK(hints.front().preferred);
  CHECK(hints.front().nodes.Count() == 40);
  CHECK(hints.back() == MemoryHint{state.NodeMask(), false});
  CHECK(hints.size() <= kMaxPreferredHints + 1);
}

TEST_CASE("SplitOverNodes fills nodes in order", "[memory][placement]") {
  const MemoryState state = StateWithFree({4, 10, 10});
  auto split = SplitOverNodes(state, NumaMask::FirstN(3), 12 * kGiB);
  REQUIRE(split.ok());
  CHECK(*split == std::map<int, uint64_t>{{0, 4 * kGiB}, {1, 8 * kGiB}, {2, 0}});
  auto too_much = SplitOverNodes(state, NumaMask().With(0).With(2), 15 * kGiB);
  REQUIRE_FALSE(too_much.ok());
  CHECK(too_much.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(too_much.status().message(), Contains("node0=4294967296 node2=10737418240"));
}

TEST_CASE("MemoryState refuses inconsistent entries and leaves nothing behind",
          "[memory][placement]") {
  MemoryState state = StateWithFree({4, 4});
  ContainerMemory over;
  over.bytes = 5 * kGiB;
  over.nodes = NumaMask().With(0);
  over.bytes_by_node = {{0, 5 * kGiB}};
  CHECK(state.Add("u", "p", "ns", "c", over).code() == StatusCode::kResourceExhausted);
  ContainerMemory wrong_sum = over;
  wrong_sum.bytes_by_node = {{0, 1 * kGiB}};
  CHECK(state.Add("u", "p", "ns", "c", wrong_sum).code() == StatusCode::kInvalidArgument);
  ContainerMemory off_machine = over;
  off_machine.nodes = NumaMask().With(5);
  CHECK(state.Add("u", "p", "ns", "c", off_machine).code() == StatusCode::kInvalidArgument);
  CHECK(state.pods().empty());
  CHECK(state.AllocatedOn(0) == 0);
}

TEST_CASE("reserved-memory flag: one size, per node, or both", "[memory][config]") {
  auto every = ParseReservedMemory("1Gi");
  REQUIRE(every.ok());
  CHECK(every->For(0) == kGiB);
  CHECK(every->For(7) == kGiB);

  auto per_node = ParseReservedMemory("0=500Mi,1=1Gi");
  REQUIRE(per_node.ok());
  CHECK(per_node->For(0) == 524288000);
  CHECK(per_node->For(1) == kGiB);
  CHECK(per_node->For(2) == kDefaultReservedBytes);

  auto mixed = ParseReservedMemory("2Gi,1=0");
  REQUIRE(mixed.ok());
  CHECK(mixed->For(0) == 2 * kGiB);
  CHECK(mixed->For(1) == 0);

  for (const char* bad :
       {"", "lots", "0=", "x=1Gi", "-1=1Gi", "0=1Gi,0=2Gi", "1Gi,2Gi", "64=1Gi", "0=1Gi,"}) {
    INFO(bad);
    auto r = ParseReservedMemory(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status().message(), Contains("reserved-memory"));
  }
}

}  // namespace
}  // namespace qrm::memory
