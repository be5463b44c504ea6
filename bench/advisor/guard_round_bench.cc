// guard_round_bench: the watermark guard's decision round (docs/guard.md, "A round").
//
//   GUARD_ROUND <us> us   one DecideRound with 500 candidate pods, median (target < 1 ms)
//
// The node (96 cores, 384 GiB) is synthetic and deterministic: 400 reclaimed_cores and 100
// shared_cores pods (shared ones are candidates too), usages from a fixed linear congruential
// sequence, nine in ten pods already at their floor. The policy is the worst round: a
// throttle-evict CPU ensurance and a memory eviction both firing, so the round sorts the
// candidates for both metrics, walks the throttle and plans two evictions. Each round starts
// from the same state (copied outside the timed part); a round that does not throttle and plan
// both evictions fails the run, so the figure is never measured on a round that did nothing.
//
// Flags: --only ID (repeatable), --pods N (500), --rounds N (2000 timed rounds).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "advisor/guard/guard_round.h"
#include "bench/scale/bench_args.h"

namespace {

using namespace qrm::advisor::guard;
using qrm::bench::BenchArgs;

constexpr double kCores = 96;
constexpr double kMemoryBytes = 384.0 * (1 << 30);
constexpr int64_t kNow = 1'750'000'000;

// A fixed sequence in [0, 1): the same pods on every machine and run.
struct Lcg {
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  double Next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
  }
};

std::vector<GuardPod> SyntheticPods(int count) {
  Lcg rng;
  std::vector<GuardPod> pods;
  for (int i = 0; i < count; ++i) {
    GuardPod p;
    GuardCandidate& c = p.candidate;
    c.pod_uid = "uid-" + std::to_string(i);
    c.pod_namespace = "batch-" + std::to_string(i % 7);
    c.pod_name = "pod-" + std::to_string(i);
    c.priority = static_cast<int32_t>(rng.Next() * 4);
    c.start_time_s = kNow - 60 - static_cast<int64_t>(rng.Next() * 86400);
    c.cpu_limit = 0.5 + 3.5 * rng.Next();
    c.cpu_usage = *c.cpu_limit * (0.2 + 0.8 * rng.Next());
    // Nine in ten at their floor already, the tenth 10 % above it: throttling walks every
    // candidate and still leaves most of the gap to eviction.
    c.cpu_request = *c.cpu_usage * (i % 10 == 0 ? 0.9 : 1.0);
    c.memory_usage = (0.2 + 2 * rng.Next()) * (1 << 30);
    p.qos_level = i % 5 == 4 ? "shared_cores" : "reclaimed_cores";
    pods.push_back(std::move(p));
  }
  return pods;
}

GuardPolicy WorstRoundPolicy() {
  GuardPolicy policy;
  ObjectiveEnsurance cpu;
  cpu.name = "cpu-usage";
  cpu.metric = "cpu_total_usage";
  cpu.watermark = Level{80, true};
  cpu.action = GuardAction::kThrottleThenEvict;
  ObjectiveEnsurance memory;
  memory.name = "memory-usage";
  memory.metric = "memory_total_usage";
  memory.watermark = Level{90, true};
  memory.action = GuardAction::kEvict;
  policy.ensurances = {cpu, memory};
  policy.candidates.shared_cores = true;
  return policy;
}

RoundInput Node(std::vector<GuardPod> pods) {
  RoundInput in;
  in.now_s = kNow;
  // CPU 95 %: a gap of 14.4 cores, more than throttling releases; memory 92 %.
  in.samples["cpu_total_usage"] = {0.95 * kCores, kNow};
  in.samples["memory_total_usage"] = {0.92 * kMemoryBytes, kNow};
  in.capacity = {{"cpu_total_usage", kCores}, {"memory_total_usage", kMemoryBytes}};
  in.pods = std::move(pods);
  return in;
}

int RunGuardRound(const BenchArgs& args) {
  const GuardPolicy policy = WorstRoundPolicy();
  const RoundInput input = Node(SyntheticPods(args.Int("pods")));
  const GuardState initial;
  std::vector<double> us;
  size_t changes = 0, plans = 0;
  for (int i = 0; i < args.Int("rounds"); ++i) {
    GuardState state = initial;
    const auto start = std::chrono::steady_clock::now();
    const GuardDecision d = DecideRound(policy, input, state);
    const auto end = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    changes = d.quota_changes.size();
    plans = d.evictions.size();
    if (changes == 0 || plans != 2) {
      std::fprintf(stderr,
                   "guard_round_bench: the round did not act (%zu quota changes, %zu "
                   "eviction plans): the figure would mean nothing\n",
                   changes, plans);
      return 1;
    }
  }
  std::fprintf(stderr,
               "# GUARD_ROUND: %d pods, %d rounds: median %.1f us (target < 1 ms); each round "
               "%zu quota changes and %zu eviction plans\n",
               args.Int("pods"), args.Int("rounds"), qrm::bench::Median(us), changes, plans);
  std::printf("GUARD_ROUND %.1f us\n", qrm::bench::Median(us));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args({{"pods", 500}, {"rounds", 2000}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "guard_round_bench: %s\n", error.c_str());
    return 2;
  }
  if (!args.Selected("GUARD_ROUND")) return 0;
  return RunGuardRound(args);
}
