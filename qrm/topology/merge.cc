#include "qrm/topology/merge.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>

namespace qrm::topology {
namespace {

using HintList = std::span<const TopologyHint>;

const TopologyHint kAnyPreferred = TopologyHint::Any(true);
const TopologyHint kAnyNonPreferred = TopologyHint::Any(false);

int Width(uint64_t bits) {
  return std::popcount(bits);
}

// One list per resource, providers in order and resources in map order; absent lists become
// [{any, preferred}], empty ones [{any, non-preferred}].
std::vector<HintList> Flatten(const ProvidersHints& providers) {
  std::vector<HintList> lists;
  for (const ResourceHints& provider : providers) {
    if (provider.empty()) {
      lists.emplace_back(&kAnyPreferred, 1);
      continue;
    }
    for (const auto& [resource, hints] : provider) {
      if (!hints.has_value()) {
        lists.emplace_back(&kAnyPreferred, 1);
      } else if (hints->empty()) {
        lists.emplace_back(&kAnyNonPreferred, 1);
      } else {
        lists.emplace_back(*hints);
      }
    }
  }
  return lists;
}

// single-numa-node keeps only preferred hints that are "any" or name exactly one node.
std::vector<std::vector<TopologyHint>> KeepSingleNodeHints(const std::vector<HintList>& lists) {
  std::vector<std::vector<TopologyHint>> kept(lists.size());
  for (std::size_t i = 0; i < lists.size(); ++i) {
    for (const TopologyHint& hint : lists[i]) {
      if (hint.preferred && (!hint.affinity.has_value() || hint.affinity->Count() == 1)) {
        kept[i].push_back(hint);
      }
    }
  }
  return kept;
}

// The kubelet's bestNonPreferredAffinityCount: the largest, over lists, of the narrowest
// non-"any" raw mask width of the list.
int WidestNarrowest(const std::vector<HintList>& lists) {
  int result = 0;
  for (HintList list : lists) {
    int narrowest = std::numeric_limits<int>::max();
    for (const TopologyHint& hint : list) {
      if (hint.affinity.has_value()) narrowest = std::min(narrowest, hint.affinity->Count());
    }
    if (narrowest != std::numeric_limits<int>::max()) result = std::max(result, narrowest);
  }
  return result;
}

// Mask order of the kubelet's CompareNUMAAffinityMasks: narrower first, then (prefer-closest)
// the smaller distance sum, then the smaller integer.
class MaskOrder {
 public:
  MaskOrder(const NumaInfo& numa, bool closest) : numa_(numa), closest_(closest) {}

  bool closest() const { return closest_; }
  uint64_t Distance(uint64_t bits) const {
    return closest_ ? numa_.DistanceSum(NumaMask::FromBits(bits)) : 0;
  }
  bool Less(uint64_t a, uint64_t b) const {
    const int wa = Width(a), wb = Width(b);
    if (wa != wb) return wa < wb;
    if (closest_ && a != b) {
      const uint64_t da = Distance(a), db = Distance(b);
      if (da != db) return da < db;
    }
    return a < b;
  }

 private:
  const NumaInfo& numa_;
  bool closest_;
};

// Path 1: the mask-order minimum of the preferred merged masks, if any.
std::optional<uint64_t> BestPreferred(const std::vector<HintList>& lists, uint64_t all,
                                      const MaskOrder& order) {
  // Lists without a preferred "any" hint must each contribute the common mask itself.
  std::vector<std::vector<uint64_t>> strict;
  std::vector<uint64_t> loose;
  for (HintList list : lists) {
    bool any_preferred = false;
    std::vector<uint64_t> masks;
    for (const TopologyHint& hint : list) {
      if (!hint.preferred) continue;
      if (hint.affinity.has_value()) {
        masks.push_back(hint.affinity->bits());
      } else {
        any_preferred = true;
      }
    }
    if (any_preferred) {
      loose.insert(loose.end(), masks.begin(), masks.end());
    } else {
      std::sort(masks.begin(), masks.end());
      masks.erase(std::unique(masks.begin(), masks.end()), masks.end());
      strict.push_back(std::move(masks));
    }
  }

  std::optional<uint64_t> best;
  auto consider = [&](uint64_t merged) {
    if (merged != 0 && (!best.has_value() || order.Less(merged, *best))) best = merged;
  };
  if (strict.empty()) {
    // Every list can pass with "any": each preferred mask alone works, and so does all-"any".
    for (uint64_t mask : loose) consider(mask & all);
    consider(all);
    return best;
  }
  const auto smallest =
      std::min_element(strict.begin(), strict.end(),
                       [](const auto& a, const auto& b) { return a.size() < b.size(); });
  for (uint64_t mask : *smallest) {
    const bool everywhere = std::all_of(strict.begin(), strict.end(), [&](const auto& set) {
      return std::binary_search(set.begin(), set.end(), mask);
    });
    if (everywhere) consider(mask & all);
  }
  return best;
}

// Set of non-zero masks: a bitmap when every node id is below 16, else open addressing.
class MaskSet {
 public:
  explicit MaskSet(uint64_t all) {
    if (all < (uint64_t{1} << 16)) {
      const std::size_t universe = std::size_t{1} << std::bit_width(all);
      dense_.assign((universe + 63) / 64, 0);
    } else {
      slots_.assign(1024, 0);
    }
  }

  // True when `key` was not in the set (it is now, unless the memo cap was reached).
  bool Insert(uint64_t key) {
    if (!dense_.empty()) {
      uint64_t& word = dense_[key >> 6];
      const uint64_t bit = uint64_t{1} << (key & 63);
      if ((word & bit) != 0) return false;
      word |= bit;
      return true;
    }
    std::size_t i = Slot(key);
    while (slots_[i] != 0) {
      if (slots_[i] == key) return false;
      i = (i + 1) & (slots_.size() - 1);
    }
    if (size_ >= kMaxMemoEntries) return true;  // Stop memoising; duplicates get re-expanded.
    slots_[i] = key;
    if (++size_ * 2 > slots_.size()) Grow();
    return true;
  }

 private:
  std::size_t Slot(uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> 32) & (slots_.size() - 1);
  }
  void Grow() {
    std::vector<uint64_t> old = std::move(slots_);
    slots_.assign(old.size() * 2, 0);
    for (uint64_t key : old) {
      if (key == 0) continue;
      std::size_t i = Slot(key);
      while (slots_[i] != 0) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = key;
    }
  }

  std::vector<uint64_t> dense_;
  std::vector<uint64_t> slots_;
  std::size_t size_ = 0;
};

// Path 2: the best non-preferred merged mask under the tier order (see merge.h).
class NonPreferredSearch {
 public:
  NonPreferredSearch(const std::vector<HintList>& lists, const NumaInfo& numa, int b,
                     const MaskOrder& order)
      : all_(numa.DefaultAffinity().bits()), b_(b), order_(order) {
    if (order_.closest()) ComputeDistanceBounds(numa);
    std::vector<std::pair<Rank, uint64_t>> by_bound;
    for (HintList list : lists) {
      by_bound.clear();
      for (const TopologyHint& hint : list) {
        const uint64_t mask = hint.affinity.has_value() ? hint.affinity->bits() & all_ : all_;
        if (mask != 0) by_bound.emplace_back(Bound(mask), mask);
      }
      if (by_bound.empty()) {
        impossible_ = true;  // Every combination through this list is empty.
        return;
      }
      // Equal masks have equal bounds, so duplicates end up adjacent.
      std::sort(by_bound.begin(), by_bound.end());
      by_bound.erase(std::unique(by_bound.begin(), by_bound.end()), by_bound.end());
      if (by_bound.size() == 1 && by_bound[0].second == all_) continue;  // Only "any".
      Level level;
      level.masks.reserve(by_bound.size());
      level.bounds.reserve(by_bound.size());
      for (const auto& [bound, mask] : by_bound) {
        level.bounds.push_back(bound);
        level.masks.push_back(mask);
      }
      levels_.push_back(std::move(level));
    }
    std::stable_sort(levels_.begin(), levels_.end(), [](const Level& x, const Level& y) {
      return x.masks.size() < y.masks.size();
    });
  }

  std::optional<uint64_t> Run() {
    if (impossible_) return std::nullopt;
    if (levels_.empty()) {
      Offer(all_);
    } else {
      memo_.reserve(levels_.size());
      for (std::size_t i = 0; i + 1 < levels_.size(); ++i) memo_.emplace_back(all_);
      Visit(0, all_);
    }
    if ((best_.head >> 62) == kNoTier) return std::nullopt;
    return best_.bits;
  }

 private:
  static constexpr uint64_t kNoTier = 3;

  // Rank of a final mask, smaller is better; also used for optimistic bounds. Lexicographic
  // over (tier, key, distance, bits), packed into two words:
  //   tier      0: width == B, 1: width < B, 2: width > B (3: nothing yet), bits 62-63;
  //   key       tier 1: B - width, tier 2: width, else 0, bits 48-55;
  //   distance  prefer-closest distance sum (< 64 * 64 * 2^32 = 2^44), else 0, bits 0-47.
  struct Rank {
    uint64_t head = uint64_t{kNoTier} << 62;
    uint64_t bits = 0;
    friend auto operator<=>(const Rank&, const Rank&) = default;
  };
  static uint64_t Head(uint64_t tier, uint64_t key, uint64_t distance) {
    return tier << 62 | key << 48 | distance;
  }
  static constexpr uint64_t kDistanceMask = (uint64_t{1} << 48) - 1;
  struct Level {
    std::vector<uint64_t> masks;  // Sorted by bound.
    std::vector<Rank> bounds;
  };

  void ComputeDistanceBounds(const NumaInfo& numa) {
    uint64_t min_self = std::numeric_limits<uint64_t>::max();
    uint64_t min_other = std::numeric_limits<uint64_t>::max();
    for (int a : numa.nodes()) {
      for (int b : numa.nodes()) {
        const uint64_t d = numa.Distance(a, b);
        if (a == b) {
          min_self = std::min(min_self, d);
        } else {
          min_other = std::min(min_other, d);
        }
      }
    }
    if (min_other == std::numeric_limits<uint64_t>::max()) min_other = 0;  // A single node.
    const auto w = static_cast<uint64_t>(b_);
    min_self_ = min_self;
    min_width_b_distance_ = w * min_self + w * (w > 0 ? w - 1 : 0) * min_other;
  }

  // The B lowest nodes of `mask` (which has `width` >= B nodes): its smallest B-subset.
  uint64_t LowestNodes(uint64_t mask, int width) const {
    if (width == b_) return mask;
    if (b_ <= width - b_) {
      uint64_t result = 0;
      for (int i = 0; i < b_; ++i) {
        result |= mask & (~mask + 1);
        mask &= mask - 1;
      }
      return result;
    }
    for (int i = 0; i < width - b_; ++i) mask &= ~(uint64_t{1} << (63 - std::countl_zero(mask)));
    return mask;
  }

  // No non-empty subset of `mask` ranks better than this (and the bound never improves when
  // `mask` shrinks).
  Rank Bound(uint64_t mask) const {
    const int width = Width(mask);
    if (b_ == 0) return {Head(2, 1, min_self_), mask & (~mask + 1)};
    if (width >= b_) return {Head(0, 0, min_width_b_distance_), LowestNodes(mask, width)};
    return {Head(1, static_cast<uint64_t>(b_ - width), 0), order_.closest() ? 0 : mask};
  }

  void Offer(uint64_t mask) {
    const int width = Width(mask);
    uint64_t head;
    if (width == b_) {
      head = Head(0, 0, 0);
    } else if (width < b_) {
      head = Head(1, static_cast<uint64_t>(b_ - width), 0);
    } else {
      head = Head(2, static_cast<uint64_t>(width), 0);
    }
    // Tier and key first; the distance sum only when they tie.
    const uint64_t best_head = best_.head & ~kDistanceMask;
    if (head > best_head) return;
    if (head == best_head && mask == best_.bits) return;
    const Rank rank{head | order_.Distance(mask), mask};
    if (rank < best_) best_ = rank;
  }

  void Visit(std::size_t depth, uint64_t partial) {
    const Level& level = levels_[depth];
    const bool last = depth + 1 == levels_.size();
    for (std::size_t j = 0; j < level.masks.size(); ++j) {
      // Sorted by bound, and a child's bound is no better than its mask's: nothing further on
      // can beat the incumbent.
      if (!(level.bounds[j] < best_)) break;
      const uint64_t child = partial & level.masks[j];
      if (child == 0) continue;
      if (last) {
        Offer(child);
        continue;
      }
      if (!(Bound(child) < best_)) continue;
      if (!memo_[depth].Insert(child)) continue;
      Visit(depth + 1, child);
    }
  }

  uint64_t all_;
  int b_;
  const MaskOrder& order_;
  uint64_t min_self_ = 0;
  uint64_t min_width_b_distance_ = 0;
  bool impossible_ = false;
  std::vector<Level> levels_;
  std::vector<MaskSet> memo_;
  Rank best_;
};

TopologyHint MergeLists(const std::vector<HintList>& lists, const NumaInfo& numa, bool closest) {
  const MaskOrder order(numa, closest);
  const uint64_t all = numa.DefaultAffinity().bits();
  if (std::optional<uint64_t> best = BestPreferred(lists, all, order)) {
    return TopologyHint::Of(NumaMask::FromBits(*best), true);
  }
  NonPreferredSearch search(lists, numa, WidestNarrowest(lists), order);
  if (std::optional<uint64_t> best = search.Run()) {
    return TopologyHint::Of(NumaMask::FromBits(*best), false);
  }
  return TopologyHint::Of(numa.DefaultAffinity(), false);
}

}  // namespace

std::string TopologyHint::ToString() const {
  std::string text = "{";
  text += affinity.has_value() ? affinity->ToString() : "any";
  text += preferred ? " preferred}" : " non-preferred}";
  return text;
}

StatusOr<MergeResult> Merge(Policy policy, const PolicyOptions& options, const NumaInfo& numa_info,
                            const ProvidersHints& providers_hints) {
  if (options.prefer_closest_numa_nodes && !numa_info.has_distances()) {
    return FailedPreconditionError(
        "topology manager option prefer-closest-numa-nodes needs NUMA distances");
  }
  if (policy == Policy::kNone) return MergeResult{TopologyHint::Any(false), true};

  std::vector<HintList> lists = Flatten(providers_hints);
  std::vector<std::vector<TopologyHint>> kept;
  if (policy == Policy::kSingleNumaNode) {
    kept = KeepSingleNodeHints(lists);
    lists.assign(kept.begin(), kept.end());
  }
  const bool closest = options.prefer_closest_numa_nodes && policy != Policy::kSingleNumaNode;

  MergeResult result;
  result.best = MergeLists(lists, numa_info, closest);
  if (policy == Policy::kSingleNumaNode && result.best.affinity == numa_info.DefaultAffinity()) {
    result.best.affinity = std::nullopt;
  }
  result.admit = policy == Policy::kBestEffort || result.best.preferred;
  return result;
}

}  // namespace qrm::topology
