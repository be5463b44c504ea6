// Merging topology hints into one NUMA affinity and an admit decision, with exactly the
// semantics of the kubelet's topology manager (pkg/kubelet/cm/topologymanager: policies none,
// best-effort, restricted and single-numa-node, option prefer-closest-numa-nodes), but without
// enumerating the cross product of the providers' hint lists.
//
// Inputs
//   Each hint provider (a resource plugin, or the CPU/memory managers) answers with a map from
//   resource name to a hint list. Per resource:
//     std::nullopt          absent list: no preference, as if it were [{any, preferred}]
//     empty vector          the resource cannot be satisfied: [{any, non-preferred}]
//     non-empty vector      the hints themselves.
//   A provider whose map is empty has no preference for any resource: [{any, preferred}].
//   The lists of all providers are flattened, providers in order and resources in map order;
//   the result does not depend on that order (see below), so the random map order of the
//   kubelet's Go implementation cannot make it differ.
//
// Scope
//   The merge is the same for both scopes; only its input differs.
//   - Scope::kContainer: for every container of the pod (init containers first, then app
//     containers, in spec order) the host asks every provider for that container's hints and
//     calls Merge once; the pod is rejected at the first container whose result has
//     admit == false, otherwise each container gets its own `best` hint.
//   - Scope::kPod: the host asks every provider for pod-level hints (the resources of the whole
//     pod) and calls Merge once; admit == false rejects the pod, otherwise every container of the
//     pod gets the same `best` hint.
//   Policy::kNone needs no hints at all: Merge returns {any, non-preferred} and admits.
//
// Result (identical to the kubelet's, field by field)
//   none              best = {any, non-preferred}, admit = true.
//   best-effort       best = merged hint (see below), admit = true.
//   restricted        best = merged hint, admit = best.preferred.
//   single-numa-node  only preferred hints of exactly one node (and preferred "any" hints) take
//                     part; best = merged hint, replaced by {any, same preferred} when its
//                     affinity equals the default affinity (all nodes); admit = best.preferred.
//   When no combination yields a non-empty affinity the merged hint is {all nodes,
//   non-preferred}.
//
// What the kubelet computes
//   Let L_1..L_k be the flattened lists and D the default affinity (all nodes). For every
//   combination (h_1..h_k) in L_1 x .. x L_k the kubelet merges
//     mask      = D & h_1 & .. & h_k          ("any" hints contribute D)
//     preferred = every h_i is preferred and every non-"any" h_i has the same raw mask,
//   drops empty masks, and folds the rest with a pairwise compare(current, candidate) in
//   iteration order. Let B = max over i of the minimum width (popcount of the raw mask) of the
//   non-"any" hints of L_i (0 when there are none): the kubelet's bestNonPreferredAffinityCount.
//   compare keeps a preferred hint over a non-preferred one; two preferred hints compare by mask
//   order; two non-preferred hints compare by B-relative rules with asymmetric tie-breaks.
//   Mask order: fewer nodes first; for equal widths, with prefer-closest-numa-nodes (and a
//   policy other than single-numa-node) the smaller average distance first; then the smaller
//   integer value first (an equal mask keeps the current hint).
//
// Why the result is order independent (proof sketch)
//   Mask order is a strict total order on distinct masks. Going through the non-preferred cases
//   of compare one by one shows that each keeps the better of the two under this strict total
//   order on non-preferred masks of width c:
//     tier 0: c == B, then mask order;
//     tier 1: c <  B, the larger c first, then mask order;
//     tier 2: c >  B, the smaller c first (mask order starts with width).
//   (With `current` of width > B, compare takes the mask-order winner, which is the narrower, so
//   anything of width <= B replaces it; with width == B only another width-B mask can replace
//   it, by mask order; with width < B a width-B candidate wins, a wider one loses, otherwise the
//   larger width wins and equal widths go by mask order.) A fold of "keep the better" over a
//   sequence returns its maximum, whatever the order, so the kubelet returns:
//     the mask-order minimum of the preferred merged masks, if there is one; otherwise
//     the tier-order best of the non-preferred merged masks, if there is one; otherwise
//     {D, non-preferred}.
//
// How this implementation finds the same hint
//   1. Preferred candidates. A merged hint is preferred iff every h_i is preferred and all
//      non-"any" ones share one raw mask M (or all are "any", giving D). So M must be a preferred
//      mask of every list that has no preferred "any" hint: intersect the sorted sets of
//      preferred masks of those lists (with none of them, every preferred mask of any list and D
//      qualify). Take the mask-order minimum of the non-empty M & D. O(H log H), H = total hints.
//   2. Only if there is none: every non-empty AND of one hint per list is a non-preferred
//      candidate, and we need the tier-order best of that set. A depth-first search over
//      distinct partial ANDs P = D & h_1 & .. & h_i (memoised per level, so each distinct partial
//      is expanded once; empty partials are dropped since they stay empty) with branch and bound:
//      every final mask below P is a subset of P, so the best rank any of them can reach is
//        width(P) >= B: tier 0, with the integer of P's B lowest nodes as tie-break (the smallest
//                       B-subset of P), and the smallest possible distance sum under
//                       prefer-closest;
//        width(P) <  B: tier 1 with width(P), reached only by P itself;
//        B == 0:        tier 2 with width 1, at P's lowest node.
//      This bound never decreases when P shrinks, so with each list sorted by the bound of its
//      own masks the scan of a list stops at the first hint whose bound cannot beat the best
//      final found so far. Lists are visited shortest first and lists that are only "any" are
//      skipped. The search is exact: it only discards partials no descendant of which can beat
//      the incumbent.
//
// Complexity
//   Preferred path: O(H log H). Non-preferred path: O(sum_i S_i * |L_i|) AND+popcount steps
//   plus hash-set inserts, where S_i = number of distinct (unpruned) partial ANDs after i lists,
//   S_i <= min(2^N, |L_1| * .. * |L_i|), N = number of NUMA nodes; the brute force is
//   |L_1| * .. * |L_k| merges of k hints. Structured hint lists (nested or interval-like masks,
//   lists containing the all-node mask, as hint providers generate them) keep S_i tiny and the
//   bound prunes most of the rest (bench P2_nopref: 64 nodes, 4 x 1,000 hints, well under 1 ms).
//   Adversarial input is different: several long lists of random wide masks at 64 nodes with no
//   preferred candidate make this a maximum-intersection search (pick one mask per list to
//   maximise the width of their AND, below B), for which no method is known that avoids
//   visiting most distinct partial ANDs in the worst case. There S_2 can reach |L_1| * |L_2| and
//   the cost up to about S_2 * |L_3| steps (10^9 for 4 lists of 1,000 masks); measured: 4 lists
//   of 1,000 uniformly random 64-bit masks 0.15-0.2 s, 6 x 200 or 8 x 100 about 0.2 s (bench
//   P2_adversarial), still far from the brute force's 10^12 merges. Memoisation is capped
//   (kMaxMemoEntries per level) so memory stays bounded at the price of re-expanding duplicates.
//   Prefer-closest-numa-nodes weakens the tier-0 bound to a machine-wide minimum distance sum,
//   so it prunes less.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/numa_mask.h"
#include "common/status.h"
#include "qrm/topology/numa_info.h"

namespace qrm::topology {

// A NUMA affinity with a flag saying whether it is a preferred (optimal) placement.
struct TopologyHint {
  // std::nullopt is the kubelet's nil affinity: any node, i.e. no preference. It merges as the
  // default affinity (all nodes) and never counts as a mask of its own.
  std::optional<NumaMask> affinity;
  bool preferred = false;

  static TopologyHint Any(bool preferred) { return {std::nullopt, preferred}; }
  static TopologyHint Of(NumaMask mask, bool preferred) { return {mask, preferred}; }

  // "{0-1 preferred}", "{any non-preferred}".
  std::string ToString() const;
  friend bool operator==(const TopologyHint&, const TopologyHint&) = default;
};

// One provider's answer: resource name -> hint list (see "Inputs" above).
using ResourceHints = std::map<std::string, std::optional<std::vector<TopologyHint>>>;
// Every provider's answer, in provider order.
using ProvidersHints = std::vector<ResourceHints>;

enum class Policy { kNone, kBestEffort, kRestricted, kSingleNumaNode };
enum class Scope { kContainer, kPod };

struct PolicyOptions {
  // Among equally wide masks prefer the smaller average NUMA distance (kubelet option
  // prefer-closest-numa-nodes). Ignored by single-numa-node, as in the kubelet. Requires
  // NumaInfo distances.
  bool prefer_closest_numa_nodes = false;
};

struct MergeResult {
  TopologyHint best;
  bool admit = false;
  friend bool operator==(const MergeResult&, const MergeResult&) = default;
};

// Upper bound on memoised partial ANDs per list level on the non-preferred path.
inline constexpr std::size_t kMaxMemoEntries = std::size_t{1} << 22;

// Merges the providers' hints under `policy`. Fails only with kFailedPrecondition when
// prefer_closest_numa_nodes is set and `numa_info` has no distances (the kubelet refuses to
// start in that case).
StatusOr<MergeResult> Merge(Policy policy, const PolicyOptions& options, const NumaInfo& numa_info,
                            const ProvidersHints& providers_hints);

}  // namespace qrm::topology
