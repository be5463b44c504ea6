// The synthetic trace generator: validates the options, draws the bursts, then samples the
// model of synthetic.h at every step.
#include "advisor/trace/synthetic.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "advisor/trace/seeded_random.h"
#include "advisor/trace/synthetic_options.h"

namespace qrm::advisor {

namespace {

using trace_internal::SeededRandom;

// Bursts draw from their own stream so that turning them on leaves the noise as it was.
constexpr uint64_t kBurstStream = 0x9e3779b97f4a7c15;

std::vector<SyntheticBurst> DrawBursts(const SyntheticOptions& options) {
  std::vector<SyntheticBurst> bursts;
  if (options.bursts.per_day <= 0) return bursts;
  SeededRandom random(options.seed ^ kBurstStream);
  const double mean_gap = static_cast<double>(kSecondsPerDay) / options.bursts.per_day;
  const int64_t end = options.start + options.duration;
  // Burst starts are a Poisson process: exponential gaps, in continuous time.
  double at = static_cast<double>(options.start) + random.Exponential(mean_gap);
  while (at < static_cast<double>(end)) {
    SyntheticBurst burst;
    burst.start = static_cast<int64_t>(at);
    burst.end = std::min(burst.start + options.bursts.duration, end);
    burst.height = options.bursts.height;
    std::vector<const SyntheticPod*> running;
    for (const SyntheticPod& pod : options.pods) {
      if (burst.start >= pod.start && burst.start < pod.end) running.push_back(&pod);
    }
    // Drawn even without a running pod: the stream does not depend on the pods' spans.
    const auto pick = static_cast<std::size_t>(random.Uniform() * running.size());
    if (!running.empty()) {
      const SyntheticPod& pod = *running[std::min(pick, running.size() - 1)];
      burst.pod = pod.name;
      burst.end = std::min(burst.end, pod.end);
    }
    bursts.push_back(std::move(burst));
    at += random.Exponential(mean_gap);
  }
  return bursts;
}

// The height the active bursts add to each pod (index i) and the system (the last index),
// kept up to date as time moves forward: sampling does not scan every burst at every step.
class ActiveBursts {
 public:
  ActiveBursts(const std::vector<SyntheticBurst>& bursts, const std::vector<SyntheticPod>& pods)
      : bursts_(bursts), heights_(pods.size() + 1, 0.0) {
    for (const SyntheticBurst& burst : bursts) {
      std::size_t index = pods.size();
      for (std::size_t i = 0; i < pods.size(); ++i) {
        if (pods[i].name == burst.pod) index = i;
      }
      owner_.push_back(index);
    }
  }

  void AdvanceTo(int64_t t) {
    while (next_ < bursts_.size() && bursts_[next_].start <= t) active_.push_back(next_++);
    std::erase_if(active_, [&](std::size_t b) { return bursts_[b].end <= t; });
    std::fill(heights_.begin(), heights_.end(), 0.0);
    for (const std::size_t b : active_) heights_[owner_[b]] += bursts_[b].height;
  }

  double height(std::size_t owner) const { return heights_[owner]; }

 private:
  const std::vector<SyntheticBurst>& bursts_;  // by start
  std::vector<std::size_t> owner_;             // of each burst
  std::vector<std::size_t> active_;
  std::vector<double> heights_;
  std::size_t next_ = 0;
};

MachineSeries Sample(const SyntheticOptions& options, const std::vector<SyntheticBurst>& bursts) {
  MachineSeries series;
  series.machine = options.machine;
  series.capacity = options.capacity;
  for (const SyntheticPod& pod : options.pods) {
    series.pods.push_back(SeriesData{pod.name, {}, pod.priority, pod.request});
  }
  SeededRandom noise(options.seed);
  ActiveBursts active(bursts, options.pods);
  const std::size_t system = options.pods.size();
  for (int64_t t = options.start; t < options.start + options.duration; t += options.step) {
    active.AdvanceTo(t);
    double node = 0;
    for (std::size_t i = 0; i < options.pods.size(); ++i) {
      const SyntheticPod& pod = options.pods[i];
      if (t < pod.start || t >= pod.end) continue;
      const double value = ExpectedPodUsage(pod, t) + pod.noise_sigma * noise.Normal();
      const double usage = std::max(value + active.height(i), 0.0);
      series.pods[i].samples.push_back(RawSample{t, usage});
      node += usage;
    }
    const double system_usage = options.system_base + options.system_sigma * noise.Normal();
    node += std::max(system_usage + active.height(system), 0.0);
    series.node.push_back(RawSample{t, std::clamp(node, 0.0, options.capacity)});
  }
  // A pod that never ran in the trace's span has no series, as in a trace read from a file.
  std::erase_if(series.pods, [](const SeriesData& pod) { return pod.samples.empty(); });
  return series;
}

}  // namespace

StatusOr<SyntheticTrace> GenerateSynthetic(const SyntheticOptions& options) {
  QRM_RETURN_IF_ERROR(trace_internal::ValidateSyntheticOptions(options));
  std::vector<SyntheticBurst> bursts = DrawBursts(options);
  MachineSeries series = Sample(options, bursts);
  return SyntheticTrace{std::move(series), SyntheticTruth(options, std::move(bursts))};
}

}  // namespace qrm::advisor
