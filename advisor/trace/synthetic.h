// Synthetic usage traces with known ground truth, for testing predictors and the replay:
// one machine, pods of given shapes, a "system" component, gaussian noise and bursts.
// The same options and seed give the same trace on every platform: the generator uses
// std::mt19937_64 (whose output the standard fixes) and its own Box-Muller sampling, never
// the standard distributions, whose algorithms differ between standard libraries.
//
// The model (docs/trace-formats.md, "Synthetic traces"): a pod running at t has the
// expected usage
//   base + diurnal_amplitude * cos(2 pi (t - diurnal_peak) / 86400)
// and each of its samples adds N(0, noise_sigma^2) noise and the height of the bursts it is
// in, clamped at 0. The system component is system_base + N(0, system_sigma^2) plus its own
// bursts, clamped at 0. A node sample is the sum of its pods' samples and the system's,
// clamped to [0, capacity]. The ground truth ignores the clamping: keep the expected levels a
// few sigma above 0 and the node's a few sigma below the capacity where it must be exact.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "advisor/trace/machine_series.h"
#include "advisor/usage/usage.h"
#include "common/status.h"

namespace qrm::advisor {

inline constexpr int64_t kSecondsPerDay = 86400;

struct SyntheticPod {
  std::string name;
  PriorityClass priority = PriorityClass::kProd;
  double request = 0;
  double base = 0;                   // mean level over a day
  double diurnal_amplitude = 0;      // <= base: the expected usage never goes below 0
  int64_t diurnal_peak = 14 * 3600;  // second of the day at which the expected usage peaks
  double noise_sigma = 0;
  // The pod runs, and has samples, at times in [start, end): a pod may arrive late or
  // leave early.
  int64_t start = 0;
  int64_t end = std::numeric_limits<int64_t>::max();
};

struct SyntheticBursts {
  double per_day = 0;      // mean number of bursts a day (a Poisson process; 0: none)
  double height = 0;       // usage a burst adds while it lasts
  int64_t duration = 300;  // seconds (cut short where its pod leaves or the trace ends)
};

struct SyntheticOptions {
  uint64_t seed = 1;
  std::string machine = "synthetic-0";
  int64_t start = 0;                  // time of the first sample, seconds
  int64_t duration = kSecondsPerDay;  // samples at start, start + step, ... < start + duration
  int64_t step = 60;                  // seconds, 1..3600
  double capacity = 32;               // the node's (32 cores, or 100 for percent)
  std::vector<SyntheticPod> pods;
  double system_base = 0;  // usage outside any pod (the kernel, the kubelet, daemons)
  double system_sigma = 0;
  // Each burst lands on a pod running when it starts (chosen at random), or on the system
  // component when none runs. Bursts come from their own random stream: the same seed with
  // and without bursts gives the same noise.
  SyntheticBursts bursts;
};

// A prod and batch mix of pods for a machine, drawn from `seed`: prod pods with a strong
// diurnal cycle and most of the requests, batch pods flatter, noisier and with more churn.
struct PodMixOptions {
  uint64_t seed = 1;
  int prod = 4;
  int batch = 4;
  double capacity = 32;
  double noise = 0.05;  // a pod's noise sigma as a fraction of its base level
  double churn = 0.25;  // the share of pods that arrive late or leave early
  int64_t start = 0;    // the trace's span, for arrivals and departures
  int64_t duration = kSecondsPerDay;
};

std::vector<SyntheticPod> MixedPods(const PodMixOptions& options);

// The expected usage of `pod` at t (0 when it does not run at t).
double ExpectedPodUsage(const SyntheticPod& pod, int64_t t);

struct SyntheticBurst {
  int64_t start = 0;
  int64_t end = 0;  // exclusive
  double height = 0;
  std::string pod;  // empty: the system component
};

// What the generator meant, before noise, bursts and clamping.
class SyntheticTruth {
 public:
  SyntheticTruth(SyntheticOptions options, std::vector<SyntheticBurst> bursts);

  // The node's expected usage at t: system_base plus the expected usage of the running pods.
  double ExpectedNode(int64_t t) const;
  // The standard deviation of the node's noise at t (the system's and the running pods').
  double NodeSigma(int64_t t) const;
  // The usage every burst active at t adds to the node.
  double BurstAt(int64_t t) const;

  bool Running(std::string_view pod, int64_t t) const;
  // A pod's expected usage at t; 0 when it does not run at t (or there is no such pod).
  double ExpectedPod(std::string_view pod, int64_t t) const;
  double PodSigma(std::string_view pod) const;  // 0 for an unknown pod
  // The usage the bursts of `pod` active at t add to it ("" for the system component's).
  double PodBurstAt(std::string_view pod, int64_t t) const;

  const std::vector<SyntheticBurst>& bursts() const { return bursts_; }
  const SyntheticOptions& options() const { return options_; }

 private:
  const SyntheticPod* Find(std::string_view pod) const;

  SyntheticOptions options_;
  std::vector<SyntheticBurst> bursts_;  // by start
};

struct SyntheticTrace {
  MachineSeries series;  // node and pods, with priority, request and capacity
  SyntheticTruth truth;
};

// Errors (kInvalidArgument) name the option and its value: a step outside 1..3600, a
// duration outside 1 s..366 days, a capacity <= 0, a pod without a valid unique name, a
// negative or non-finite level, an amplitude above the base, start >= end.
StatusOr<SyntheticTrace> GenerateSynthetic(const SyntheticOptions& options);

}  // namespace qrm::advisor
