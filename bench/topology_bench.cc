// Benchmarks of the topology manager's hint merge (qrm/topology/merge.h).
//
// Prints one line per figure, "ID value unit [ratio=X]", on stdout; notes (inputs, answers,
// whether the brute force finished) go to stderr as "# ..." lines.
//
//   P1         8 NUMA nodes, 4 providers x 255 hints (every non-empty subset of the nodes, the
//              narrowest subsets that fit the provider's request preferred), one common
//              preferred mask: fast merge, median ms. ratio = brute-force time / fast time.
//   P1_nopref  8 NUMA nodes, 4 providers answering only the subsets that fit their request (as
//              the kubelet's managers do), no common preferred mask: the non-preferred search.
//   P1.brute, P1_nopref.brute
//              the brute force (testing/topology/brute_force_merge.h, the kubelet's
//              algorithm; 255^4 = 4.2e9 permutations for P1) in seconds, capped at --brute-cap
//              seconds (default 20). When the cap stops it, the figure is the time spent, a
//              LOWER BOUND, and so is the ratio; <ID>.brute_est extrapolates the full run from
//              the fraction of permutations done. When it finishes, the answers are compared.
//   P2         64 NUMA nodes, 4 providers x 1,000 hints, a common preferred mask exists.
//   P2_nopref  the same with no common preferred mask (each provider prefers pairs in its own
//              sockets) and only local masks (3-10 nodes within one or two sockets): the
//              non-preferred branch-and-bound search over distinct partial ANDs.
//   P2_nopref_wide
//              as P2_nopref, plus the all-node mask and whole sockets in every list.
//   P2_adversarial
//              4 lists of 1,000 uniformly random 64-bit masks, nothing preferred: the worst
//              case of the non-preferred search (a max-intersection search, see merge.h). It is
//              timed once, not as a median; it is not what hint providers produce.
//
// Usage: topology_bench [--only ID]... [--brute-cap SECONDS] [--full]
//   --only ID   run only figure ID (and its sub-figures ID.*); repeatable.
//   --full      run the brute force to completion (minutes) and check the answers agree.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "qrm/topology/merge.h"
#include "qrm/topology/numa_info.h"
#include "testing/topology/brute_force_merge.h"

namespace qrm::topology {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

struct Flags {
  std::set<std::string> only;
  double brute_cap_seconds = 20;
  bool full = false;

  bool Wants(const std::string& id) const {
    if (only.empty()) return true;
    return only.count(id) != 0;
  }
};

NumaInfo Machine(int nodes) {
  std::vector<int> ids;
  for (int i = 0; i < nodes; ++i) ids.push_back(i);
  return *NumaInfo::Create(ids);
}

MergeResult MergeOrDie(Policy policy, const NumaInfo& numa, const ProvidersHints& providers) {
  StatusOr<MergeResult> result = Merge(policy, {}, numa, providers);
  if (!result.ok()) {
    std::fprintf(stderr, "merge failed: %s\n", result.status().ToString().c_str());
    std::exit(1);
  }
  return *result;
}

// Median wall time of `fn` in milliseconds over at least 11 runs and about `budget` seconds.
double MedianMs(const std::function<void()>& fn, double budget = 0.5, int max_runs = 2001) {
  std::vector<double> ms;
  const Clock::time_point start = Clock::now();
  while (static_cast<int>(ms.size()) < 11 ||
         (Seconds(Clock::now() - start) < budget && static_cast<int>(ms.size()) < max_runs)) {
    const Clock::time_point t0 = Clock::now();
    fn();
    ms.push_back(Seconds(Clock::now() - t0) * 1e3);
  }
  std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
  return ms[ms.size() / 2];
}

std::string Describe(const MergeResult& r) {
  return r.best.ToString() + (r.admit ? " admit" : " reject");
}

// ---- P1: 8 nodes, every subset -------------------------------------------------------------

// Every non-empty subset of 8 nodes (or, with `only_fitting`, those whose capacity fits
// `request`); a subset is preferred when it fits and no narrower subset does (the kubelet's
// managers prefer the minimal fitting width).
std::vector<TopologyHint> EverySubset(const std::array<int, 8>& capacity, int request,
                                      bool only_fitting) {
  auto fits = [&](unsigned mask) {
    int sum = 0;
    for (int n = 0; n < 8; ++n) {
      if ((mask >> n) & 1U) sum += capacity[static_cast<std::size_t>(n)];
    }
    return sum >= request;
  };
  int narrowest = 9;
  for (unsigned mask = 1; mask < 256; ++mask) {
    if (fits(mask)) narrowest = std::min(narrowest, std::popcount(mask));
  }
  std::vector<TopologyHint> hints;
  for (unsigned mask = 1; mask < 256; ++mask) {
    if (only_fitting && !fits(mask)) continue;
    hints.push_back(
        TopologyHint::Of(NumaMask::FromBits(mask), fits(mask) && std::popcount(mask) == narrowest));
  }
  return hints;
}

// cpu, memory, gpu and nic capacities per node and requests. With `common` every provider
// answers all 255 subsets and their narrowest fitting pairs share exactly {3,6}; without, the
// providers answer only fitting subsets and the nic only fits on supersets of {0,7}.
ProvidersHints P1Input(bool common) {
  const bool only_fitting = !common;
  ProvidersHints providers(4);
  providers[0]["cpu"] = EverySubset({4, 4, 4, 4, 4, 8, 8, 4}, 12, only_fitting);
  providers[1]["memory"] = EverySubset({2, 2, 2, 5, 2, 6, 6, 5}, 10, only_fitting);
  providers[2]["gpu"] = EverySubset({0, 0, 0, 1, 0, 1, 1, 0}, 2, only_fitting);
  providers[3]["nic"] = common ? EverySubset({1, 0, 0, 1, 0, 0, 1, 1}, 2, only_fitting)
                               : EverySubset({1, 0, 0, 0, 0, 0, 0, 1}, 2, only_fitting);
  return providers;
}

void RunP1(const Flags& flags, const std::string& id, bool common) {
  const NumaInfo numa = Machine(8);
  const ProvidersHints providers = P1Input(common);
  const Policy policy = Policy::kBestEffort;
  const MergeResult fast = MergeOrDie(policy, numa, providers);
  const double fast_ms = MedianMs([&] { MergeOrDie(policy, numa, providers); });
  std::fprintf(stderr, "# %s: 8 nodes, 4 providers x %zu/%zu/%zu/%zu hints, best-effort -> %s\n",
               id.c_str(), providers[0].begin()->second->size(),
               providers[1].begin()->second->size(), providers[2].begin()->second->size(),
               providers[3].begin()->second->size(), Describe(fast).c_str());

  reference::Budget budget;
  if (!flags.full) {
    budget.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(flags.brute_cap_seconds));
  }
  const Clock::time_point t0 = Clock::now();
  const std::optional<MergeResult> brute =
      reference::BruteForceMerge(policy, {}, numa, providers, budget);
  const double brute_s = Seconds(Clock::now() - t0);
  const uint64_t total = reference::PermutationCount(policy, providers);
  const double ratio = brute_s * 1e3 / fast_ms;

  std::printf("%s %.4f ms ratio=%.0f\n", id.c_str(), fast_ms, ratio);
  std::printf("%s.brute %.2f s\n", id.c_str(), brute_s);
  if (brute.has_value()) {
    std::fprintf(stderr, "# %s.brute finished: %llu permutations -> %s (%s)\n", id.c_str(),
                 static_cast<unsigned long long>(total), Describe(*brute).c_str(),
                 *brute == fast ? "same answer" : "DIFFERENT ANSWER");
    if (!(*brute == fast)) std::exit(1);
  } else {
    const double fraction = static_cast<double>(budget.permutations) / static_cast<double>(total);
    std::printf("%s.brute_est %.1f s\n", id.c_str(), brute_s / fraction);
    std::fprintf(stderr,
                 "# %s.brute stopped at the %.0f s cap after %llu of %llu permutations (%.1f%%): "
                 "%s.brute and ratio are lower bounds, %s.brute_est extrapolates\n",
                 id.c_str(), flags.brute_cap_seconds,
                 static_cast<unsigned long long>(budget.permutations),
                 static_cast<unsigned long long>(total), fraction * 100, id.c_str(), id.c_str());
  }
  std::fflush(stdout);
}

// ---- P2: 64 nodes, 1,000 hints per provider ------------------------------------------------

// A 64-node machine as 8 sockets of 8 nodes. Each provider answers like a kubelet hint
// provider with 1,000 distinct masks: pairs of nodes of one socket (its narrowest, preferred),
// and wider masks of nodes close together (3 to 10 nodes within one socket or two neighbouring
// ones); with `wide` also the all-node mask and every whole socket, as providers that enumerate
// every fitting mask do. `preferred_sockets` are the sockets its preferred pairs come from;
// `extra_pairs` are preferred too.
std::vector<TopologyHint> Provider64(std::mt19937_64& rng,
                                     const std::vector<int>& preferred_sockets,
                                     const std::vector<uint64_t>& extra_pairs, bool wide) {
  std::set<uint64_t> seen;
  std::vector<TopologyHint> hints;
  auto add = [&](uint64_t mask, bool preferred) {
    if (mask != 0 && seen.insert(mask).second) {
      hints.push_back(TopologyHint::Of(NumaMask::FromBits(mask), preferred));
    }
  };
  if (wide) {
    add(~uint64_t{0}, false);
    for (int s = 0; s < 8; ++s) add(uint64_t{0xFF} << (8 * s), false);
  }
  for (uint64_t pair : extra_pairs) add(pair, true);
  for (int s : preferred_sockets) {
    for (int a = 0; a < 8; ++a) {
      for (int b = a + 1; b < 8; ++b) {
        if (std::bernoulli_distribution(0.5)(rng)) {
          add((uint64_t{1} << (8 * s + a)) | (uint64_t{1} << (8 * s + b)), true);
        }
      }
    }
  }
  std::uniform_int_distribution<int> socket(0, 7);
  std::uniform_int_distribution<int> width(3, 10);
  while (hints.size() < 1000) {
    const int s = socket(rng);
    const int span = std::bernoulli_distribution(0.5)(rng) ? 1 : 2;
    const int w = width(rng);
    uint64_t mask = 0;
    while (std::popcount(mask) < std::min(w, 8 * span)) {
      const int node = (8 * s + std::uniform_int_distribution<int>(0, 8 * span - 1)(rng)) % 64;
      mask |= uint64_t{1} << node;
    }
    add(mask, false);
  }
  std::shuffle(hints.begin(), hints.end(), rng);
  return hints;
}

// Preferred pairs come from disjoint sockets per provider ({0,1}, {2,3}, {4,5}, {6,7}); with
// `common` every provider also prefers the same three pairs in sockets 4 and 6.
ProvidersHints P2Input(bool common, bool wide) {
  std::mt19937_64 rng(common ? 2 : (wide ? 3 : 5));
  const char* const names[] = {"cpu", "memory", "gpu", "nic"};
  const std::vector<uint64_t> shared =
      common ? std::vector<uint64_t>{(uint64_t{1} << 37) | (uint64_t{1} << 38),
                                     (uint64_t{1} << 33) | (uint64_t{1} << 39),
                                     (uint64_t{1} << 50) | (uint64_t{1} << 52)}
             : std::vector<uint64_t>{};
  ProvidersHints providers(4);
  for (int p = 0; p < 4; ++p) {
    providers[static_cast<std::size_t>(p)][names[p]] =
        Provider64(rng, {2 * p, 2 * p + 1}, shared, wide);
  }
  return providers;
}

ProvidersHints AdversarialInput() {
  std::mt19937_64 rng(4);
  ProvidersHints providers(4);
  for (int p = 0; p < 4; ++p) {
    std::vector<TopologyHint> hints;
    for (int i = 0; i < 1000; ++i)
      hints.push_back(TopologyHint::Of(NumaMask::FromBits(rng()), false));
    providers[static_cast<std::size_t>(p)]["r"] = std::move(hints);
  }
  return providers;
}

void RunP2(const std::string& id, const ProvidersHints& providers, bool once) {
  const NumaInfo numa = Machine(64);
  const Policy policy = Policy::kBestEffort;
  const Clock::time_point t0 = Clock::now();
  const MergeResult fast = MergeOrDie(policy, numa, providers);
  const double first_ms = Seconds(Clock::now() - t0) * 1e3;
  const double ms = once ? first_ms : MedianMs([&] { MergeOrDie(policy, numa, providers); });
  std::fprintf(stderr, "# %s: 64 nodes, 4 providers x %zu hints, best-effort -> %s\n", id.c_str(),
               providers[0].begin()->second->size(), Describe(fast).c_str());
  if (once) {
    std::fprintf(stderr,
                 "# %s is timed once: uniformly random masks are the worst case of the "
                 "non-preferred search (see qrm/topology/merge.h), not what providers send\n",
                 id.c_str());
  }
  std::printf("%s %.4f ms\n", id.c_str(), ms);
  std::fflush(stdout);
}

}  // namespace
}  // namespace qrm::topology

int main(int argc, char** argv) {
  using namespace qrm::topology;
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--only" && i + 1 < argc) {
      flags.only.insert(argv[++i]);
    } else if (arg == "--brute-cap" && i + 1 < argc) {
      flags.brute_cap_seconds = std::atof(argv[++i]);
    } else if (arg == "--full") {
      flags.full = true;
    } else {
      std::fprintf(stderr, "usage: %s [--only ID]... [--brute-cap SECONDS] [--full]\n", argv[0]);
      return 2;
    }
  }
  if (flags.Wants("P1")) RunP1(flags, "P1", /*common=*/true);
  if (flags.Wants("P1_nopref")) RunP1(flags, "P1_nopref", /*common=*/false);
  if (flags.Wants("P2")) RunP2("P2", P2Input(/*common=*/true, /*wide=*/true), false);
  if (flags.Wants("P2_nopref"))
    RunP2("P2_nopref", P2Input(/*common=*/false, /*wide=*/false), false);
  if (flags.Wants("P2_nopref_wide")) {
    RunP2("P2_nopref_wide", P2Input(/*common=*/false, /*wide=*/true), false);
  }
  if (flags.Wants("P2_adversarial")) RunP2("P2_adversarial", AdversarialInput(), /*once=*/true);
  return 0;
}
