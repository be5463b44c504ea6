// Paired timing of the same operation through two paths (directly on containerd and through
// the shim), interleaved call by call in one run, so that drift (containerd's background
// work, other processes on a 2-core machine, CPU frequency) hits both paths alike.
//
// Order alternates A B, B A, A B, ... so that neither path always runs first (the first of a
// pair tends to pay for a cold cache or a woken-up poller).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace qrm::bench {

// Milliseconds of each call, in order.
using Latencies = std::vector<double>;

// The q-quantile (0..1) by nearest rank on a sorted copy; 0 for no samples.
inline double Quantile(Latencies v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(rank, v.size() - 1)];
}

struct PairedLatencies {
  Latencies direct;
  Latencies shim;
};

// The calls' latencies; `ok` is false if a call failed (the run stopped there).
struct PairedRun {
  PairedLatencies latencies;
  bool ok = true;
};

// Runs `op(true)` (through the shim) and `op(false)` (directly) `warmup` times each
// untimed, then `iterations` timed pairs in alternating order. `op` returns false when the
// call failed.
inline PairedRun TimePaired(int warmup, int iterations, const std::function<bool(bool shim)>& op) {
  using Clock = std::chrono::steady_clock;
  PairedRun run;
  for (int i = 0; i < warmup; ++i) {
    if (!op(false) || !op(true)) {
      run.ok = false;
      return run;
    }
  }
  run.latencies.direct.reserve(iterations);
  run.latencies.shim.reserve(iterations);
  for (int i = 0; i < iterations; ++i) {
    for (int half = 0; half < 2; ++half) {
      const bool shim = (i + half) % 2 == 1;  // pair i: direct first when i is even
      const auto start = Clock::now();
      if (!op(shim)) {
        run.ok = false;
        return run;
      }
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      (shim ? run.latencies.shim : run.latencies.direct).push_back(ms);
    }
  }
  return run;
}

// The median over pairs of shim_i / direct_i. Pairs ran back to back, so each ratio compares
// the two paths under the same conditions; with slow, noisy operations (a pod start varies
// by +-15% from one to the next on a loaded 2-core machine) it is steadier than the ratio of
// the two medians, which compares different pods.
inline double MedianPairRatio(const PairedLatencies& l) {
  Latencies ratios;
  for (size_t i = 0; i < std::min(l.direct.size(), l.shim.size()); ++i) {
    if (l.direct[i] > 0) ratios.push_back(l.shim[i] / l.direct[i]);
  }
  return Quantile(ratios, 0.5);
}

// Prints the figure lines of scripts/bench's contract for one comparison:
//   <id> <shim median> ms ratio=<shim median / direct median>
//   <id>_p90 <shim p90> ms ratio=<shim p90 / direct p90>
//   <id>_pairs <median pair ratio> x ratio=<the same>
// and a note with both paths' median and p90 on stderr.
inline void PrintComparison(const std::string& id, const PairedLatencies& l,
                            const std::string& note_extra = "") {
  const double d50 = Quantile(l.direct, 0.5), s50 = Quantile(l.shim, 0.5);
  const double d90 = Quantile(l.direct, 0.9), s90 = Quantile(l.shim, 0.9);
  std::fprintf(stderr,
               "# %s: direct median %.4f ms p90 %.4f ms | shim median %.4f ms p90 %.4f ms | "
               "ratio of medians %.3f, added %.4f ms (%zu pairs%s)\n",
               id.c_str(), d50, d90, s50, s90, s50 / d50, s50 - d50, l.shim.size(),
               note_extra.c_str());
  std::printf("%s %.4f ms ratio=%.3f\n", id.c_str(), s50, s50 / d50);
  std::printf("%s_p90 %.4f ms ratio=%.3f\n", id.c_str(), s90, s90 / d90);
  const double pairs = MedianPairRatio(l);
  std::printf("%s_pairs %.3f x ratio=%.3f\n", id.c_str(), pairs, pairs);
  std::fflush(stdout);
}

}  // namespace qrm::bench
