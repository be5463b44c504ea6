// replay_bench: every peak model on the reference synthetic trace (advisor/replay/
// reference_trace.h: 8 days, the first 24 h warm-up) for three seeds (three machines, scores
// merged), the replay's rules as qrm-advisor replay's defaults. Prints, after the warm-up, per
// model (its spec with every other character than letters and digits made '_'):
//
//   REPLAY_<model>_violation <%> %      share of scored windows missed
//   REPLAY_<model>_reclaimable <%> %    mean reclaimable share of capacity
//   REPLAY_<model>_miss_p99 <%> %       99th percentile of a miss, share of capacity
//
// and the bar for the adaptive model against Koordinator's on the same trace:
//
//   REPLAY_adaptive_gain <gain %> % ratio=<adaptive / koordinator reclaimable>
//
// which holds when the adaptive model's violation rate is no higher and the gain >= 10 %.
// Flags: --only ID (repeatable), --seed N (1), --seeds N (3 machines: seeds N, N+1, ...),
// --days N (8), --budget X (the adaptive model's budget; default: Koordinator's rate).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "advisor/replay/reference_trace.h"
#include "advisor/replay/trace_replay.h"
#include "bench/scale/bench_args.h"

namespace {

using namespace qrm::advisor;

struct Args {
  uint64_t seed = 1;  // the first of --seeds consecutive seeds, one machine each
  int seeds = 3;
  int days = 8;
  double budget = 0;  // 0: Koordinator's violation rate on the same trace
};

// The flags through scripts/bench's shared parser (bench/scale/bench_args.h); an error
// message, or empty.
std::string ParseArgs(qrm::bench::BenchArgs& parsed, int argc, char** argv, Args& args) {
  if (std::string error = parsed.Parse(argc, argv); !error.empty()) return error;
  args.seed = static_cast<uint64_t>(parsed.Int("seed"));
  args.seeds = parsed.Int("seeds");
  args.days = parsed.Int("days");
  const std::string& budget = parsed.String("budget");
  char* end = nullptr;
  args.budget = std::strtod(budget.c_str(), &end);
  if (budget.empty() || *end != '\0' || !(args.budget >= 0 && args.budget < 0.5)) {
    return "--budget: invalid value \"" + budget + "\" (0 to 0.5; 0: Koordinator's rate)";
  }
  if (args.seeds < 1 || args.days < 2) return "--seeds must be >= 1 and --days >= 2";
  return "";
}

// A model spec as a figure id: "max:borg-default+adaptive" -> "max_borg_default_adaptive".
std::string Id(std::string model) {
  for (char& c : model) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return model;
}

const ModelResult* Find(const ReplayResult& r, const std::string& model) {
  for (const ModelResult& m : r.models) {
    if (m.model == model) return &m;
  }
  return nullptr;
}

// The machines' replays merged (windows and misses add up).
std::optional<ReplayResult> Replay(const std::vector<SyntheticTrace>& traces,
                                   const ReplayOptions& options) {
  ReplayResult merged;
  for (const SyntheticTrace& trace : traces) {
    auto result = ReplayMachine(trace.series, trace.series.capacity.value_or(32), options);
    if (!result.ok()) {
      std::fprintf(stderr, "replay_bench: %s\n", result.status().message().c_str());
      return std::nullopt;
    }
    merged.Merge(*result);
  }
  return merged;
}

void PrintGain(const ReplayResult& result) {
  const ModelResult* adaptive = Find(result, "adaptive");
  const ModelResult* koordinator = Find(result, "koordinator");
  if (koordinator->after_warmup.MeanReclaimable() <= 0) return;
  const double ratio =
      adaptive->after_warmup.MeanReclaimable() / koordinator->after_warmup.MeanReclaimable();
  std::fprintf(stderr, "# REPLAY_adaptive_gain: violation %.2f %% vs koordinator %.2f %%\n",
               100 * adaptive->after_warmup.ViolationRate(),
               100 * koordinator->after_warmup.ViolationRate());
  std::printf("REPLAY_adaptive_gain %.1f %% ratio=%.3f\n", 100 * (ratio - 1), ratio);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  qrm::bench::BenchArgs parsed({{"seed", 1}, {"seeds", 3}, {"days", 8}}, {{"budget", "0"}});
  if (std::string error = ParseArgs(parsed, argc, argv, args); !error.empty()) {
    std::fprintf(stderr, "replay_bench: %s\n", error.c_str());
    return 2;
  }
  if (!parsed.Selected("REPLAY")) return 0;
  std::vector<SyntheticTrace> traces;
  for (int i = 0; i < args.seeds; ++i) {
    auto trace = GenerateSynthetic(
        ReferenceSyntheticOptions(args.seed + static_cast<uint64_t>(i), args.days));
    if (!trace.ok()) {
      std::fprintf(stderr, "replay_bench: %s\n", trace.status().message().c_str());
      return 1;
    }
    traces.push_back(std::move(*trace));
  }
  ReplayOptions options;
  options.models = {"koordinator",  "nsigma-v1",        "nsigma-v2",
                    "borg-default", "resource-central", "max:borg-default+resource-central"};
  options.model_options = ModelOptions::ForResource(Resource::kCpu);
  auto result = Replay(traces, options);
  if (!result) return 1;
  // The adaptive model holds the violation rate it is given: at the Koordinator model's own
  // rate on this trace (the bar compares them at equal violation), unless --budget.
  const double koordinator_rate = Find(*result, "koordinator")->after_warmup.ViolationRate();
  options.models = {"adaptive"};
  options.model_options.adaptive.violation_budget =
      args.budget > 0 ? args.budget : std::max(koordinator_rate, 0.001);
  auto adaptive = Replay(traces, options);
  if (!adaptive) return 1;
  result->models.insert(result->models.end() - 1, adaptive->models.front());
  std::fprintf(stderr,
               "# REPLAY: %d machine(s) (seeds %lu..), %d days each, %lu steps; after a 24 h "
               "warm-up:\n",
               args.seeds, static_cast<unsigned long>(args.seed), args.days,
               static_cast<unsigned long>(result->steps));
  std::fprintf(stderr, "# REPLAY: the adaptive model's violation budget: %.2f %%\n",
               100 * options.model_options.adaptive.violation_budget);
  for (const ModelResult& m : result->models) {
    const Score& s = m.after_warmup;
    const std::string id = "REPLAY_" + Id(m.model);
    std::printf("%s_violation %.2f %%\n", id.c_str(), 100 * s.ViolationRate());
    std::printf("%s_reclaimable %.2f %%\n", id.c_str(), 100 * s.MeanReclaimable());
    std::printf("%s_miss_p99 %.2f %%\n", id.c_str(), 100 * s.MissP99());
  }
  PrintGain(*result);
  return 0;
}
