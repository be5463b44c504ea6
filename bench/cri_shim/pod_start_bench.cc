#include "bench/cri_shim/pod_start_bench.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/cri_shim/histogram_deltas.h"
#include "bench/cri_shim/paired_timing.h"
#include "common/metrics/metrics.h"
#include "testing/child_process.h"

namespace qrm::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::array<const char*, 3> kSteps = {"RunPodSandbox", "CreateContainer",
                                               "StartContainer"};

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One pod start, step by step; false if a step failed. The pod's sandbox id is appended to
// `pods` as soon as it exists (for removal).
bool StartPod(qrm::e2e::CriClient& cri, const std::string& name, std::array<double, 3>* step_ms,
              std::vector<std::string>* pods) {
  auto t = Clock::now();
  auto pod = cri.RunHostNetworkPod(name, name + "-uid", "default",
                                   {{"katalyst.kubewharf.io/qos_level", "shared_cores"}});
  if (!pod.ok()) {
    std::fprintf(stderr, "P4: RunPodSandbox %s: %s\n", name.c_str(),
                 pod.status().ToString().c_str());
    return false;
  }
  (*step_ms)[0] = MsSince(t);
  pods->push_back(pod->id);
  qrm::e2e::ContainerSpec spec;
  spec.name = "main";
  spec.cpu_shares = 512;
  spec.memory_limit_in_bytes = 32LL << 20;
  t = Clock::now();
  auto id = cri.CreateContainer(*pod, spec);
  if (!id.ok()) {
    std::fprintf(stderr, "P4: CreateContainer %s: %s\n", name.c_str(),
                 id.status().ToString().c_str());
    return false;
  }
  (*step_ms)[1] = MsSince(t);
  t = Clock::now();
  if (Status s = cri.StartContainer(*id); !s.ok()) {
    std::fprintf(stderr, "P4: StartContainer %s: %s\n", name.c_str(), s.ToString().c_str());
    return false;
  }
  (*step_ms)[2] = MsSince(t);
  return true;
}

std::vector<std::unique_ptr<qrm::testing::ChildProcess>> StartPlugins(qrm::testing::TempDir& dir) {
  const std::string plugins = dir.File("plugins");
  std::vector<std::unique_ptr<qrm::testing::ChildProcess>> children;
  children.push_back(std::make_unique<qrm::testing::ChildProcess>(
      std::vector<std::string>{QRM_CPU_PLUGIN, "--plugin-dir", plugins, "--state-dir",
                               dir.File("cpu"), "--reclaimed-pool-size", "0", "--log-level",
                               "warn"},
      dir.File("cpu.log")));
  children.push_back(std::make_unique<qrm::testing::ChildProcess>(
      std::vector<std::string>{QRM_MEMORY_PLUGIN, "--plugin-dir", plugins, "--state-dir",
                               dir.File("memory"), "--log-level", "warn"},
      dir.File("memory.log")));
  children.push_back(std::make_unique<qrm::testing::ChildProcess>(
      std::vector<std::string>{QRM_NIC_PLUGIN, "--plugin-dir", plugins, "--state-dir",
                               dir.File("nic"), "--include-virtual", "--unknown-nic-speed-mbps",
                               "10000", "--log-level", "warn"},
      dir.File("nic.log")));
  return children;
}

// Adds after - before to `into`.
void Accumulate(const HistogramTotals& before, const HistogramTotals& after,
                HistogramTotals* into) {
  for (const auto& [series, d] : Delta(before, after)) {
    (*into)[series].sum += d.sum;
    (*into)[series].count += d.count;
  }
}

void PrintBreakdown(const std::array<PairedLatencies, 3>& steps, const HistogramTotals& timers,
                    int pods) {
  for (size_t i = 0; i < kSteps.size(); ++i) {
    const double d = Quantile(steps[i].direct, 0.5), s = Quantile(steps[i].shim, 0.5);
    std::fprintf(stderr,
                 "# P4 step %-15s direct median %7.2f ms | shim median %7.2f ms | added %+.2f ms\n",
                 kSteps[i], d, s, s - d);
  }
  std::fprintf(stderr,
               "# P4 in-process timers per pod started through the shim (mean ms, calls/pod):\n");
  for (const auto& [series, total] : timers) {
    std::fprintf(stderr, "#   %8.3f ms  %4.1fx  %s\n", total.sum * 1000.0 / pods,
                 total.count / pods, series.c_str());
  }
}

// Appends `from`'s latencies to `into` (pairs stay aligned: both paths time the same rounds).
void Append(const PairedLatencies& from, PairedLatencies* into) {
  into->direct.insert(into->direct.end(), from.direct.begin(), from.direct.end());
  into->shim.insert(into->shim.end(), from.shim.begin(), from.shim.end());
}

// The measurements of one run: pods started alternately directly and through the shim.
struct RunResult {
  PairedLatencies total;
  std::array<PairedLatencies, 3> steps;
  HistogramTotals timers;  // host and shim timers, over the timed shim pod starts only
};

// One run of `config.warmup + config.pods` rounds; false if a pod failed to start.
bool MeasureRun(const PodStartConfig& config, int run, qrm::e2e::CriClient& direct,
                qrm::e2e::CriClient& shim, RunResult* result) {
  std::vector<std::string> direct_pods, shim_pods;
  const int rounds = config.warmup + config.pods;
  for (int r = 0; r < rounds; ++r) {
    const bool timed = r >= config.warmup;
    for (int half = 0; half < 2; ++half) {
      const bool through_shim = (r + half) % 2 == 1;  // alternate which path goes first
      auto& cri = through_shim ? shim : direct;
      auto& pods = through_shim ? shim_pods : direct_pods;
      const std::string name =
          (through_shim ? "shim-" : "direct-") + std::to_string(run) + "-" + std::to_string(r);
      const HistogramTotals before =
          through_shim ? ParseHistogramTotals(metrics::Default().Exposition()) : HistogramTotals{};
      std::array<double, 3> step_ms{};
      if (!StartPod(cri, name, &step_ms, &pods)) return false;
      if (!timed) continue;
      if (through_shim) {
        Accumulate(before, ParseHistogramTotals(metrics::Default().Exposition()), &result->timers);
      }
      double sum = 0;
      for (size_t i = 0; i < result->steps.size(); ++i) {
        (through_shim ? result->steps[i].shim : result->steps[i].direct).push_back(step_ms[i]);
        sum += step_ms[i];
      }
      (through_shim ? result->total.shim : result->total.direct).push_back(sum);
    }
    // Keep the node's pod count small and equal for both paths.
    (void)direct.StopAndRemovePod(direct_pods.back());
    (void)shim.StopAndRemovePod(shim_pods.back());
  }
  return true;
}

}  // namespace

bool ComparePodStart(const PodStartConfig& config, qrm::testing::TempDir& dir,
                     qrm::host::Host& host, qrm::e2e::CriClient& direct,
                     qrm::e2e::CriClient& shim) {
  std::vector<std::unique_ptr<qrm::testing::ChildProcess>> plugins;
  if (!config.null_run) {
    plugins = StartPlugins(dir);
    if (!qrm::testing::WaitFor([&] {
          return host.registry().Find("cpu") && host.registry().Find("memory") &&
                 host.registry().Find("qrm.io/nic");
        })) {
      std::fprintf(stderr, "P4: the plugins did not register\n");
      return false;
    }
  }
  const std::string id = config.null_run ? "P4_null" : "P4";
  qrm::e2e::CriClient& second = config.null_run ? direct : shim;
  // The target holds in every one of several consecutive runs, not just on average: each run
  // is printed (P4_run<i>), then the worst and all runs pooled (P4).
  RunResult pooled;
  double worst = 0;
  for (int run = 1; run <= config.runs; ++run) {
    RunResult result;
    if (!MeasureRun(config, run, direct, second, &result)) return false;
    const double ratio = Quantile(result.total.shim, 0.5) / Quantile(result.total.direct, 0.5);
    worst = std::max(worst, ratio);
    std::printf("%s_run%d %.4f ms ratio=%.3f\n", id.c_str(), run, Quantile(result.total.shim, 0.5),
                ratio);
    std::fflush(stdout);
    for (size_t i = 0; i < result.steps.size(); ++i) {
      Append(result.steps[i], &pooled.steps[i]);
    }
    Append(result.total, &pooled.total);
    Accumulate({}, result.timers, &pooled.timers);
  }
  if (!config.null_run) PrintBreakdown(pooled.steps, pooled.timers, config.pods * config.runs);
  std::printf("%s_worst_run %.3f x ratio=%.3f\n", id.c_str(), worst, worst);
  PrintComparison(id, pooled.total,
                  std::string(", RunPodSandbox+CreateContainer+StartContainer, ") +
                      (config.null_run ? "both paths direct" : "3 plugins") + ", " +
                      std::to_string(config.runs) + " runs pooled");
  return true;
}

}  // namespace qrm::bench
