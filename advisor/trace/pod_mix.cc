// A plausible prod/batch mix of pods for a synthetic machine (MixedPods).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "advisor/trace/seeded_random.h"
#include "advisor/trace/synthetic.h"

namespace qrm::advisor {

namespace {

using trace_internal::SeededRandom;

// Prod pods hold most of the requests, use well under them and follow the day (a peak in
// the afternoon); they rarely come and go.
SyntheticPod ProdPod(int i, const PodMixOptions& options, SeededRandom& random) {
  SyntheticPod pod;
  pod.name = fmt::format("prod-{}", i);
  pod.priority = PriorityClass::kProd;
  pod.request = 0.6 * options.capacity / options.prod;
  pod.base = pod.request * random.Uniform(0.3, 0.6);
  pod.diurnal_amplitude = pod.base * random.Uniform(0.2, 0.5);
  pod.diurnal_peak = static_cast<int64_t>(random.Uniform(12, 16) * 3600);
  pod.noise_sigma = options.noise * pod.base;
  return pod;
}

// Batch pods use most of their smaller requests, hardly follow the day, are noisier and
// come and go more.
SyntheticPod BatchPod(int i, const PodMixOptions& options, SeededRandom& random) {
  SyntheticPod pod;
  pod.name = fmt::format("batch-{}", i);
  pod.priority = PriorityClass::kBatch;
  pod.request = 0.3 * options.capacity / options.batch;
  pod.base = pod.request * random.Uniform(0.5, 0.9);
  pod.diurnal_amplitude = pod.base * random.Uniform(0, 0.1);
  pod.diurnal_peak = static_cast<int64_t>(random.Uniform(0, kSecondsPerDay));
  pod.noise_sigma = 2 * options.noise * pod.base;
  return pod;
}

// Makes a pod arrive in the first half of the span or leave in the second half.
void Churn(SyntheticPod& pod, const PodMixOptions& options, SeededRandom& random) {
  const auto at = [&](double low, double high) {
    return options.start +
           static_cast<int64_t>(random.Uniform(low, high) * static_cast<double>(options.duration));
  };
  if (random.Uniform() <= 0.5) {
    pod.start = at(0.1, 0.5);
  } else {
    pod.end = at(0.5, 0.9);
  }
}

}  // namespace

std::vector<SyntheticPod> MixedPods(const PodMixOptions& options) {
  SeededRandom random(options.seed);
  std::vector<SyntheticPod> pods;
  pods.reserve(static_cast<size_t>(std::max(options.prod, 0)) +
               static_cast<size_t>(std::max(options.batch, 0)));
  for (int i = 0; i < options.prod; ++i) pods.push_back(ProdPod(i, options, random));
  for (int i = 0; i < options.batch; ++i) pods.push_back(BatchPod(i, options, random));
  for (SyntheticPod& pod : pods) {
    const double churn = pod.priority == PriorityClass::kProd ? options.churn / 2 : options.churn;
    if (random.Uniform() <= churn) Churn(pod, options, random);
  }
  return pods;
}

}  // namespace qrm::advisor
