// advisor_bench: the node advisor's speed and memory (docs/advisor.md, "Speed and memory").
//
//   P9 <%> %          CPU time of Agent::Tick per 1 s tick with 200 containers, as a share of
//                     one core at the daemon's 1 s interval (target <= 1 %)
//   P10 <ms> ms       one prediction update for 1,000 pods (Predictors::Observe of a step and
//                     PredictCpu/PredictMemory/PredictPool), median, warm koordinator models
//                     (target <= 5 ms)
//   P10_rss <MiB> MiB VmRSS of advisor_rss_probe, qrm-advisor with 1,000 containers after an
//                     hour of simulated 1 s sampling (target <= 30 MiB)
//
// P9 runs the daemon's Agent (qrm-advisor's own flags and defaults) on a FakeNode: a cgroup v1
// tree and procfs in tmpfs whose counters advance at known rates, and in-process qrm-host and
// runtime sources. Time is simulated (the agent takes it as arguments); only the ticks are
// timed, not the rewriting of the fake files, and every tick's samples are checked against the
// known rates: a figure measured on wrong data fails the run.
//
// Flags: --only ID (repeatable), --containers N (200, P9), --ticks N (600 timed P9 ticks),
// --pods N (1000, P10), --warm-hours N (6 h of steps before P10 is timed), --updates N (200),
// --rss-containers N (1000), --rss-ticks N (3600).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/resource.h>
#include <time.h>

#include "bench/advisor/fake_node.h"
#include "bench/scale/bench_args.h"

namespace {

using namespace qrm::advisor;
using qrm::InternalError;
using qrm::StatusOr;
using qrm::bench::BenchArgs;
using qrm::bench::advisor::FakeNode;
using qrm::bench::advisor::FakeNodeOptions;

// A Unix time on a step boundary: simulated second k of a run is kEpoch + k.
constexpr int64_t kEpoch = 1'750'000'020;
constexpr int64_t kNsPerSecond = 1'000'000'000;

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double RusageSeconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// The q quantile (nearest rank) of `v`.
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "advisor_bench: %s\n", what.c_str());
  return 1;
}

// ---- P9: the sampling loop ----

struct TickCost {
  int ticks = 0;
  double cpu_s = 0, user_s = 0, system_s = 0;
  std::vector<double> wall_ms;
};

// One tick at simulated second k, its CPU time (every thread of the process) added to `cost`.
void TimedTick(Agent& agent, int64_t k, TickCost& cost) {
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  const double cpu = ProcessCpuSeconds();
  const auto wall = std::chrono::steady_clock::now();
  agent.Tick(kEpoch + k, k * kNsPerSecond);
  cost.wall_ms.push_back(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count());
  cost.cpu_s += ProcessCpuSeconds() - cpu;
  getrusage(RUSAGE_SELF, &after);
  cost.user_s += RusageSeconds(after.ru_utime) - RusageSeconds(before.ru_utime);
  cost.system_s += RusageSeconds(after.ru_stime) - RusageSeconds(before.ru_stime);
  cost.ticks++;
}

// Empty when the agent ended the run as the daemon should: predictions known, pools sized,
// one series per container and resource (+ node, system, pool), nothing unreadable.
std::string CheckAgent(const Agent& agent, size_t containers) {
  return agent.Read([&](const AgentState& s, const Predictors&, const PoolReport& pools,
                        const SamplerCounters& counters) -> std::string {
    if (!s.cpu.known || !s.memory.known || !s.pool.known) return "no prediction after the run";
    if (s.store.series_count() != 2 * containers + 5) {
      return fmt::format("{} series in the store, not {}", s.store.series_count(),
                         2 * containers + 5);
    }
    if (counters.vanished + counters.unreadable + counters.node_errors + counters.cpu_resets > 0) {
      return "cgroups vanished, unreadable or reset";
    }
    if (!pools.enabled || pools.decided == 0) return "the pool controller never decided";
    return "";
  });
}

void PrintAgentNotes(const Agent& agent) {
  agent.Read([](const AgentState& s, const Predictors& p, const PoolReport& pools, auto&&...) {
    std::fprintf(stderr,
                 "# P9: after the run: %zu series, %ld steps observed; predicted peak cpu %.1f "
                 "cores, memory %.1f GiB, shared pool %.1f cores; pools shared %d / reclaimed %d "
                 "(%s, need %.1f cores)\n",
                 s.store.series_count(), static_cast<long>(p.steps_observed()), s.cpu.peak,
                 s.memory.peak / (1 << 30), s.pool.peak, pools.shared, pools.reclaimed,
                 pools.reason.c_str(), pools.need_cores);
    return 0;
  });
}

int RunP9(const BenchArgs& args) {
  FakeNodeOptions options;
  options.containers = args.Int("containers");
  FakeNode node(options);
  auto config = qrm::bench::advisor::DaemonConfigFor(node, {});
  if (!config.ok()) return Fail("P9: " + config.status().ToString());
  auto predictors = Predictors::Make(config->predictors);
  if (!predictors.ok()) return Fail("P9: " + predictors.status().ToString());
  Agent agent(config->agent, std::move(*predictors), node.MakeHostSource(),
              node.MakeRuntimeSource());
  // Two steps untimed: the models have observed a step and the pool controller decides.
  const int warm = 120, timed = std::max(args.Int("ticks"), 1);
  TickCost cost;
  for (int64_t k = 1; k <= warm + timed; ++k) {
    node.AdvanceTo(k, /*memory=*/true);
    if (k <= warm) {
      agent.Tick(kEpoch + k, k * kNsPerSecond);
    } else {
      TimedTick(agent, k, cost);
    }
    std::optional<double> node_cpu;
    const auto samples = qrm::bench::advisor::LastTickSamples(agent, node_cpu);
    std::string wrong = qrm::bench::advisor::CheckSamples(node, samples, node_cpu, k, k);
    if (!wrong.empty()) return Fail("P9: sampled values wrong: " + wrong);
  }
  if (std::string wrong = CheckAgent(agent, node.containers().size()); !wrong.empty()) {
    return Fail("P9: " + wrong);
  }
  const double interval_s = static_cast<double>(config->agent.store.ring.interval_s);
  const double per_tick_ms = 1000 * cost.cpu_s / cost.ticks;
  std::fprintf(stderr,
               "# P9: %zu containers in %d pods, %d ticks timed after %d: CPU %.3f ms per tick "
               "(user %.3f, system %.3f), wall p50 %.3f / p99 %.3f ms; every sample matched the "
               "fake node's rates\n",
               node.containers().size(), node.pods(), cost.ticks, warm, per_tick_ms,
               1000 * cost.user_s / cost.ticks, 1000 * cost.system_s / cost.ticks,
               Quantile(cost.wall_ms, 0.5), Quantile(cost.wall_ms, 0.99));
  PrintAgentNotes(agent);
  std::printf("P9 %.3f %%\n", 100 * cost.cpu_s / cost.ticks / interval_s);
  return 0;
}

// ---- P10: one prediction update ----

struct FakePod {
  std::string uid;
  PriorityClass priority = PriorityClass::kProd;
  bool shared = true;  // in the shared pool (the pool model's usage)
  double request = 0, cpu_level = 0, memory_level = 0;
};

constexpr double kGiB = 1024.0 * 1024 * 1024;

// `n` pods of a busy 104-CPU, 384 GiB node: 0.01-0.1 cores and 0.05-0.5 GiB each, every 5th
// a reclaimed (batch) pod, the first 4 dedicated_cores (outside the shared pool).
std::vector<FakePod> MakePods(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> cores(0.01, 0.1), gib(0.05, 0.5);
  std::vector<FakePod> pods;
  for (int i = 0; i < n; ++i) {
    FakePod p;
    p.uid = fmt::format("5f1e{:04x}-9c3b-4d2e-8a7f-{:012x}", i, 7919ULL * static_cast<unsigned>(i));
    p.priority = i % 5 == 4 ? PriorityClass::kBatch : PriorityClass::kProd;
    p.shared = i >= 4 && p.priority == PriorityClass::kProd;
    p.cpu_level = cores(rng);
    p.request = p.priority == PriorityClass::kProd ? 1.5 * p.cpu_level : 0;
    p.memory_level = gib(rng) * kGiB;
    pods.push_back(std::move(p));
  }
  return pods;
}

// A step ending at `end` as StepAccumulator closes it: each pod near its level (a daily swing
// of +-30 % and 15 % noise), system usage, and the shared pool's usage.
StepObservations MakeStep(const std::vector<FakePod>& pods, int64_t end, int64_t started,
                          std::mt19937_64& rng) {
  std::normal_distribution<double> noise(1.0, 0.15);
  const double day =
      1 + 0.3 * std::sin(2 * std::numbers::pi * static_cast<double>(end % 86400) / 86400);
  StepObservations s;
  s.cpu.time = s.memory.time = end;
  s.cpu.capacity = 104;
  s.memory.capacity = 384 * kGiB;
  double cpu_sum = 2, memory_sum = 6 * kGiB, pool_sum = 0;  // system: 2 cores, 6 GiB
  for (const FakePod& p : pods) {
    const double cpu = std::max(p.cpu_level * day * noise(rng), 0.0);
    const double memory = std::max(p.memory_level * (1 + (noise(rng) - 1) / 3), 0.0);
    s.cpu.pods.push_back({p.uid, p.priority, p.request, cpu, 1.2 * cpu, started});
    s.memory.pods.push_back({p.uid, p.priority, 0, memory, 1.02 * memory, started});
    cpu_sum += cpu;
    memory_sum += memory;
    if (p.shared) pool_sum += cpu;
  }
  s.cpu.node = cpu_sum, s.cpu.node_max = 1.15 * cpu_sum;
  s.memory.node = memory_sum, s.memory.node_max = 1.02 * memory_sum;
  Observation pool;
  pool.time = end;
  pool.capacity = 72;
  pool.node = pool_sum, pool.node_max = 1.15 * pool_sum;
  s.pool = pool;
  return s;
}

struct Updates {
  std::vector<double> ms;
  Prediction cpu, memory, pool;
};

// Times `updates` prediction updates of `model` (node and pool) for `pods` pods after
// `warm_hours` of steps; every pod is past the 24 h cold start (it counts its usage, not its
// request: the costlier case).
StatusOr<Updates> TimeUpdates(const std::string& model, int pods, int warm_hours, int updates) {
  PredictorOptions options;
  options.node_model = options.pool_model = model;
  auto predictors = Predictors::Make(options);
  if (!predictors.ok()) return predictors.status();
  std::mt19937_64 rng(15);
  const std::vector<FakePod> fake = MakePods(pods, rng);
  const int64_t started = kEpoch - 2 * 86400;
  int64_t end = kEpoch;
  for (int i = 0; i < warm_hours * 60; ++i)
    predictors->Observe(MakeStep(fake, end += 60, started, rng));
  Updates out;
  for (int i = 0; i < updates; ++i) {
    const StepObservations step = MakeStep(fake, end += 60, started, rng);
    const auto t0 = std::chrono::steady_clock::now();
    predictors->Observe(step);
    out.cpu = predictors->PredictCpu(end);  // assigned like Agent::Step: the old ones go
    out.memory = predictors->PredictMemory(end);
    out.pool = predictors->PredictPool(end);
    out.ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!out.cpu.known || !out.memory.known || !out.pool.known || !(out.cpu.peak > 0)) {
    return InternalError(model + ": no prediction after the warm-up");
  }
  return out;
}

int RunP10(const BenchArgs& args) {
  const int pods = args.Int("pods"), warm = args.Int("warm-hours");
  const int updates = std::max(args.Int("updates"), 1);
  for (const char* model : {"koordinator", "adaptive", "nsigma-v2"}) {
    auto u = TimeUpdates(model, pods, warm, updates);
    if (!u.ok()) return Fail("P10: " + u.status().ToString());
    const double p50 = Quantile(u->ms, 0.5), p99 = Quantile(u->ms, 0.99);
    std::fprintf(stderr,
                 "# P10: %s (node and pool models), %d pods, %d updates after %d h of steps: "
                 "p50 %.3f ms, p99 %.3f ms; predicted cpu %.1f cores, memory %.1f GiB, pool %.1f "
                 "cores\n",
                 model, pods, updates, warm, p50, p99, u->cpu.peak, u->memory.peak / kGiB,
                 u->pool.peak);
    if (std::string(model) == "koordinator") std::printf("P10 %.3f ms\n", p50);
  }
  return 0;
}

// ---- P10_rss: the daemon's memory ----

// advisor_rss_probe's "key value" lines.
StatusOr<std::map<std::string, double>> RunProbe(const BenchArgs& args) {
  const std::string command = fmt::format("'{}' --containers {} --ticks {}", QRM_ADVISOR_RSS_PROBE,
                                          args.Int("rss-containers"), args.Int("rss-ticks"));
  FILE* out = ::popen(command.c_str(), "r");
  if (out == nullptr) return InternalError("cannot run " + command);
  std::map<std::string, double> values;
  char key[64];
  double value = 0;
  for (char line[256]; std::fgets(line, sizeof line, out) != nullptr;) {
    if (std::sscanf(line, "%63s %lf", key, &value) == 2) values[key] = value;
  }
  const int status = ::pclose(out);
  if (status != 0) return InternalError(fmt::format("{}: exit status {}", command, status));
  for (const char* k : {"VmRSS_kB", "RssAnon_kB", "RssFile_kB", "series"}) {
    if (!values.contains(k)) return InternalError(fmt::format("{}: no {} line", command, k));
  }
  return values;
}

int RunRss(const BenchArgs& args) {
  auto v = RunProbe(args);
  if (!v.ok()) return Fail("P10_rss: " + v.status().ToString());
  auto mib = [&](const char* key) { return (*v)[key] / 1024; };
  std::fprintf(stderr,
               "# P10_rss: %d containers, %d ticks of 1 s; RssAnon %.1f MiB, RssFile %.1f MiB, "
               "RssShmem %.1f MiB, VmHWM %.1f MiB; malloc live %.1f MiB, free kept %.1f MiB; "
               "%.0f threads; VmRSS after malloc_trim %.1f MiB\n",
               args.Int("rss-containers"), args.Int("rss-ticks"), mib("RssAnon_kB"),
               mib("RssFile_kB"), mib("RssShmem_kB"), mib("VmHWM_kB"), mib("heap_live_kB"),
               mib("heap_free_kB"), (*v)["threads"], mib("VmRSS_trimmed_kB"));
  std::fprintf(stderr,
               "# P10_rss: %.0f store series (%.1f MiB of rings), %.0f pods in the models, %.0f "
               "steps observed, %.0f checkpoint writes, %.0f /metrics scrapes\n",
               (*v)["series"], (*v)["ring_kB"] / 1024, (*v)["model_pods"], (*v)["steps"],
               (*v)["checkpoint_writes"], (*v)["scrapes"]);
  std::printf("P10_rss %.1f MiB\n", mib("VmRSS_kB"));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args({{"containers", 200},
                  {"ticks", 600},
                  {"pods", 1000},
                  {"warm-hours", 6},
                  {"updates", 200},
                  {"rss-containers", 1000},
                  {"rss-ticks", 3600}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "advisor_bench: %s\n", error.c_str());
    return 2;
  }
  qrm::ConfigureLogging("warn");  // pool decisions are logged at info
  int rc = 0;
  try {
    if (args.Selected("P9")) rc |= RunP9(args);
    if (args.Selected("P10")) rc |= RunP10(args);
    if (args.Selected("P10_rss")) rc |= RunRss(args);
  } catch (const std::exception& e) {
    return Fail(e.what());
  }
  return rc;
}
