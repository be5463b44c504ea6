// The ground truth of a synthetic trace: the model of synthetic.h without its noise.
#include <cmath>
#include <numbers>
#include <utility>

#include "advisor/trace/synthetic.h"

namespace qrm::advisor {

double ExpectedPodUsage(const SyntheticPod& pod, int64_t t) {
  if (t < pod.start || t >= pod.end) return 0;
  // The phase from whole seconds: a double t - peak would lose precision far from 0.
  const int64_t second_of_cycle =
      ((t - pod.diurnal_peak) % kSecondsPerDay + kSecondsPerDay) % kSecondsPerDay;
  const double angle = 2.0 * std::numbers::pi * static_cast<double>(second_of_cycle) /
                       static_cast<double>(kSecondsPerDay);
  return pod.base + pod.diurnal_amplitude * std::cos(angle);
}

SyntheticTruth::SyntheticTruth(SyntheticOptions options, std::vector<SyntheticBurst> bursts)
    : options_(std::move(options)), bursts_(std::move(bursts)) {}

const SyntheticPod* SyntheticTruth::Find(std::string_view pod) const {
  for (const SyntheticPod& p : options_.pods) {
    if (p.name == pod) return &p;
  }
  return nullptr;
}

double SyntheticTruth::ExpectedNode(int64_t t) const {
  double sum = options_.system_base;
  for (const SyntheticPod& pod : options_.pods) sum += ExpectedPodUsage(pod, t);
  return sum;
}

double SyntheticTruth::NodeSigma(int64_t t) const {
  // Independent noises: their variances add.
  double variance = options_.system_sigma * options_.system_sigma;
  for (const SyntheticPod& pod : options_.pods) {
    if (t >= pod.start && t < pod.end) variance += pod.noise_sigma * pod.noise_sigma;
  }
  return std::sqrt(variance);
}

double SyntheticTruth::BurstAt(int64_t t) const {
  double sum = 0;
  for (const SyntheticBurst& burst : bursts_) {
    if (t >= burst.start && t < burst.end) sum += burst.height;
  }
  return sum;
}

bool SyntheticTruth::Running(std::string_view pod, int64_t t) const {
  const SyntheticPod* p = Find(pod);
  return p != nullptr && t >= p->start && t < p->end;
}

double SyntheticTruth::ExpectedPod(std::string_view pod, int64_t t) const {
  const SyntheticPod* p = Find(pod);
  return p == nullptr ? 0 : ExpectedPodUsage(*p, t);
}

double SyntheticTruth::PodSigma(std::string_view pod) const {
  const SyntheticPod* p = Find(pod);
  return p == nullptr ? 0 : p->noise_sigma;
}

double SyntheticTruth::PodBurstAt(std::string_view pod, int64_t t) const {
  double sum = 0;
  for (const SyntheticBurst& burst : bursts_) {
    if (burst.pod == pod && t >= burst.start && t < burst.end) sum += burst.height;
  }
  return sum;
}

}  // namespace qrm::advisor
