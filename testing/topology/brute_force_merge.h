// Reference merge: the kubelet topology manager's algorithm transcribed step by step
// (pkg/kubelet/cm/topologymanager: filterProvidersHints, filterSingleNumaHints,
// maxOfMinAffinityCounts, HintMerger.compare, mergePermutation, iterateAllProviderTopologyHints,
// NUMAInfo.Narrowest/Closest, the per-policy Merge and admit rules). It enumerates every
// permutation of the flattened hint lists in the kubelet's order and folds them with the
// kubelet's pairwise compare, exactly as the kubelet does, so it is exponential on purpose.
//
// It shares nothing with qrm/topology/merge.cc but the input types, and is the oracle of the
// randomized equivalence test and the baseline of bench/topology_bench.cc. Header-only so both
// can use it.
#pragma once

#include <bit>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "qrm/topology/merge.h"
#include "qrm/topology/numa_info.h"

namespace qrm::topology::reference {

// Optional time cap, and progress counters, for running the reference on huge inputs.
struct Budget {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  uint64_t permutations = 0;  // Out: permutations merged.
  bool finished = true;       // Out: false when the deadline stopped the enumeration.
};

// The kubelet's TopologyHint: a nil-able bitmask and a preferred flag.
struct KubeletHint {
  bool has_affinity = false;  // false: NUMANodeAffinity == nil
  uint64_t affinity = 0;
  bool preferred = false;
};

inline int BitCount(uint64_t mask) {
  return std::popcount(mask);
}

// bitmask.IsNarrowerThan, as written there.
inline bool IsNarrowerThan(uint64_t s, uint64_t mask) {
  if (BitCount(s) == BitCount(mask)) {
    if (s < mask) return true;
  }
  return BitCount(s) < BitCount(mask);
}

inline KubeletHint FromHint(const TopologyHint& hint) {
  KubeletHint k;
  k.has_affinity = hint.affinity.has_value();
  k.affinity = k.has_affinity ? hint.affinity->bits() : 0;
  k.preferred = hint.preferred;
  return k;
}

// filterProvidersHints.
inline std::vector<std::vector<KubeletHint>> FilterProvidersHints(const ProvidersHints& providers) {
  std::vector<std::vector<KubeletHint>> all;
  for (const ResourceHints& hints : providers) {
    if (hints.empty()) {
      all.push_back({KubeletHint{false, 0, true}});
      continue;
    }
    for (const auto& [resource, list] : hints) {
      if (!list.has_value()) {
        all.push_back({KubeletHint{false, 0, true}});
        continue;
      }
      if (list->empty()) {
        all.push_back({KubeletHint{false, 0, false}});
        continue;
      }
      std::vector<KubeletHint> converted;
      for (const TopologyHint& hint : *list) converted.push_back(FromHint(hint));
      all.push_back(converted);
    }
  }
  return all;
}

// filterSingleNumaHints.
inline std::vector<std::vector<KubeletHint>> FilterSingleNumaHints(
    const std::vector<std::vector<KubeletHint>>& all_resources_hints) {
  std::vector<std::vector<KubeletHint>> filtered_resources_hints;
  for (const auto& one_resource_hints : all_resources_hints) {
    std::vector<KubeletHint> filtered;
    for (const KubeletHint& hint : one_resource_hints) {
      if (!hint.has_affinity && hint.preferred) filtered.push_back(hint);
      if (hint.has_affinity && BitCount(hint.affinity) == 1 && hint.preferred) {
        filtered.push_back(hint);
      }
    }
    filtered_resources_hints.push_back(filtered);
  }
  return filtered_resources_hints;
}

// narrowestHint.
inline const KubeletHint* NarrowestHint(const std::vector<KubeletHint>& hints) {
  if (hints.empty()) return nullptr;
  const KubeletHint* narrowest = nullptr;
  for (const KubeletHint& hint : hints) {
    if (!hint.has_affinity) continue;
    if (narrowest == nullptr) narrowest = &hint;
    if (IsNarrowerThan(hint.affinity, narrowest->affinity)) narrowest = &hint;
  }
  return narrowest;
}

// maxOfMinAffinityCounts.
inline int MaxOfMinAffinityCounts(const std::vector<std::vector<KubeletHint>>& filtered_hints) {
  int max_of_min_count = 0;
  for (const auto& resource_hints : filtered_hints) {
    const KubeletHint* narrowest = NarrowestHint(resource_hints);
    if (narrowest == nullptr) continue;
    if (BitCount(narrowest->affinity) > max_of_min_count) {
      max_of_min_count = BitCount(narrowest->affinity);
    }
  }
  return max_of_min_count;
}

// NUMAInfo.Narrowest / Closest / CalculateAverageFor.
struct KubeletNumaInfo {
  const NumaInfo& numa;

  uint64_t DefaultAffinityMask() const { return numa.DefaultAffinity().bits(); }

  uint64_t Narrowest(uint64_t m1, uint64_t m2) const {
    if (IsNarrowerThan(m1, m2)) return m1;
    return m2;
  }

  double CalculateAverageFor(uint64_t bm) const {
    if (BitCount(bm) == 0) return 0;
    double count = 0;
    double sum = 0;
    // for node1 in bm.GetBits() { for node2 in bm.GetBits() { ... } }
    for (uint64_t bits1 = bm; bits1 != 0; bits1 &= bits1 - 1) {
      const int node1 = std::countr_zero(bits1);
      for (uint64_t bits2 = bm; bits2 != 0; bits2 &= bits2 - 1) {
        const int node2 = std::countr_zero(bits2);
        sum += static_cast<double>(numa.Distance(node1, node2));
        count++;
      }
    }
    return sum / count;
  }

  uint64_t Closest(uint64_t m1, uint64_t m2) const {
    if (BitCount(m1) != BitCount(m2)) return Narrowest(m1, m2);
    const double m1_distance = CalculateAverageFor(m1);
    const double m2_distance = CalculateAverageFor(m2);
    if (m1_distance == m2_distance) {
      if (m1 < m2) return m1;  // IsLessThan
      return m2;
    }
    if (m1_distance < m2_distance) return m1;
    return m2;
  }
};

// mergePermutation.
inline KubeletHint MergePermutation(uint64_t default_affinity,
                                    const std::vector<const KubeletHint*>& permutation) {
  // The kubelet collects the non-nil affinities in a slice and compares each with the first;
  // keeping the first one and the running AND is the same without an allocation per call.
  bool preferred = true;
  bool have_first = false;
  uint64_t first = 0;
  uint64_t merged = default_affinity;
  for (const KubeletHint* hint : permutation) {
    if (hint->has_affinity) {
      if (!have_first) {
        have_first = true;
        first = hint->affinity;
      }
      merged &= hint->affinity;
      if (hint->affinity != first) preferred = false;
    }
    if (!hint->preferred) preferred = false;
  }
  return KubeletHint{true, merged, preferred};
}

// HintMerger.
class HintMerger {
 public:
  HintMerger(const NumaInfo& numa, std::vector<std::vector<KubeletHint>> hints, Policy policy,
             const PolicyOptions& opts)
      : numa_info_{numa},
        hints_(std::move(hints)),
        prefer_closest_(policy != Policy::kSingleNumaNode && opts.prefer_closest_numa_nodes),
        best_non_preferred_affinity_count_(MaxOfMinAffinityCounts(hints_)) {}

  // HintMerger.Merge; std::nullopt when the budget's deadline stopped it.
  std::optional<KubeletHint> Merge(Budget& budget) {
    const uint64_t default_affinity = numa_info_.DefaultAffinityMask();
    std::optional<KubeletHint> best_hint;
    std::vector<const KubeletHint*> accum;
    accum.reserve(hints_.size());
    budget.finished = true;
    Iterate(0, accum, budget, [&](const std::vector<const KubeletHint*>& permutation) {
      const KubeletHint merged_hint = MergePermutation(default_affinity, permutation);
      const KubeletHint* current = best_hint.has_value() ? &*best_hint : nullptr;
      const KubeletHint* chosen = Compare(current, &merged_hint);
      if (chosen == &merged_hint) best_hint = merged_hint;
    });
    if (!budget.finished) return std::nullopt;
    if (!best_hint.has_value()) best_hint = KubeletHint{true, default_affinity, false};
    return best_hint;
  }

 private:
  // CompareNUMAAffinityMasks.
  const KubeletHint* CompareMasks(const KubeletHint* current, const KubeletHint* candidate) const {
    if (candidate->affinity == current->affinity) return current;
    uint64_t best;
    if (prefer_closest_) {
      best = numa_info_.Closest(current->affinity, candidate->affinity);
    } else {
      best = numa_info_.Narrowest(current->affinity, candidate->affinity);
    }
    if (best == current->affinity) return current;
    return candidate;
  }

  // HintMerger.compare.
  const KubeletHint* Compare(const KubeletHint* current, const KubeletHint* candidate) const {
    const int best_count = best_non_preferred_affinity_count_;
    if (BitCount(candidate->affinity) == 0) return current;
    if (current == nullptr) return candidate;
    if (!current->preferred && candidate->preferred) return candidate;
    if (current->preferred && !candidate->preferred) return current;
    if (current->preferred && candidate->preferred) return CompareMasks(current, candidate);
    // Both non-preferred: cases 1, 2, 3a, 3b, 3ca, 3cb, 3cc of the kubelet.
    const int current_count = BitCount(current->affinity);
    const int candidate_count = BitCount(candidate->affinity);
    if (current_count > best_count) return CompareMasks(current, candidate);
    if (current_count == best_count) {
      if (candidate_count != best_count) return current;
      return CompareMasks(current, candidate);
    }
    if (candidate_count > best_count) return current;
    if (candidate_count == best_count) return candidate;
    if (candidate_count > current_count) return candidate;
    if (candidate_count < current_count) return current;
    return CompareMasks(current, candidate);
  }

  // iterateAllProviderTopologyHints: nested loops, list 0 outermost.
  template <typename Callback>
  void Iterate(std::size_t i, std::vector<const KubeletHint*>& accum, Budget& budget,
               const Callback& callback) const {
    if (!budget.finished) return;
    if (i == hints_.size()) {
      callback(accum);
      if ((++budget.permutations & 0xFFFF) == 0 && budget.deadline.has_value() &&
          std::chrono::steady_clock::now() > *budget.deadline) {
        budget.finished = false;
      }
      return;
    }
    for (const KubeletHint& hint : hints_[i]) {
      accum.push_back(&hint);
      Iterate(i + 1, accum, budget, callback);
      accum.pop_back();
      if (!budget.finished) return;
    }
  }

  KubeletNumaInfo numa_info_;
  std::vector<std::vector<KubeletHint>> hints_;
  bool prefer_closest_;
  int best_non_preferred_affinity_count_;
};

inline TopologyHint ToHint(const KubeletHint& hint) {
  if (!hint.has_affinity) return TopologyHint::Any(hint.preferred);
  return TopologyHint::Of(NumaMask::FromBits(hint.affinity), hint.preferred);
}

// The per-policy Merge of the kubelet (policy_none.go, policy_best_effort.go,
// policy_restricted.go, policy_single_numa_node.go). std::nullopt when the deadline hit.
inline std::optional<MergeResult> BruteForceMerge(Policy policy, const PolicyOptions& opts,
                                                  const NumaInfo& numa,
                                                  const ProvidersHints& providers_hints,
                                                  Budget& budget) {
  if (policy == Policy::kNone) return MergeResult{TopologyHint{}, true};
  std::vector<std::vector<KubeletHint>> filtered_hints = FilterProvidersHints(providers_hints);
  if (policy == Policy::kSingleNumaNode) {
    filtered_hints = FilterSingleNumaHints(filtered_hints);
  }
  HintMerger merger(numa, std::move(filtered_hints), policy, opts);
  std::optional<KubeletHint> best_hint = merger.Merge(budget);
  if (!best_hint.has_value()) return std::nullopt;
  if (policy == Policy::kSingleNumaNode && best_hint->affinity == numa.DefaultAffinity().bits()) {
    best_hint = KubeletHint{false, 0, best_hint->preferred};
  }
  const bool admit = policy == Policy::kBestEffort ? true : best_hint->preferred;
  return MergeResult{ToHint(*best_hint), admit};
}

inline MergeResult BruteForceMerge(Policy policy, const PolicyOptions& opts, const NumaInfo& numa,
                                   const ProvidersHints& providers_hints) {
  Budget unlimited;
  return *BruteForceMerge(policy, opts, numa, providers_hints, unlimited);
}

// Number of permutations the kubelet enumerates for this input (saturating).
inline uint64_t PermutationCount(Policy policy, const ProvidersHints& providers_hints) {
  if (policy == Policy::kNone) return 0;
  std::vector<std::vector<KubeletHint>> lists = FilterProvidersHints(providers_hints);
  if (policy == Policy::kSingleNumaNode) lists = FilterSingleNumaHints(lists);
  uint64_t total = 1;
  for (const auto& list : lists) {
    if (list.empty()) return 0;
    if (total > UINT64_MAX / list.size()) return UINT64_MAX;
    total *= list.size();
  }
  return total;
}

}  // namespace qrm::topology::reference
