#include "advisor/predict/koordinator_model.h"

#include <algorithm>

namespace qrm::advisor {

KoordinatorOptions KoordinatorOptions::For(Resource resource) {
  KoordinatorOptions o;
  if (resource == Resource::kMemory) {
    o.histogram.first_bucket = 5.0 * 1024 * 1024;
    o.histogram.max_value = 2.0 * 1024 * 1024 * 1024 * 1024;
    o.histogram.half_life_s = 24 * 3600.0;
    o.percentile = 0.98;
  }
  return o;
}

KoordinatorModel::KoordinatorModel(const KoordinatorOptions& options)
    : options_(options), system_(options.histogram), prod_(options.histogram) {}

void KoordinatorModel::Observe(const Observation& step) {
  observed_ = true;
  capacity_ = step.capacity;
  last_step_ = step.time;
  double prod = 0;
  for (const PodUsage& pod : step.pods) {
    if (!IsProtected(pod.priority)) continue;
    prod += pod.usage;
    auto [it, added] = pods_.try_emplace(pod.uid, PodModel{DecayedHistogram(options_.histogram)});
    PodModel& model = it->second;
    if (added) model.started = pod.started;
    model.request = pod.request;
    model.last_seen = step.time;
    model.histogram.Add(pod.usage, 1, step.time);
  }
  // System usage is what no pod accounts for, the reclaimed pods included.
  system_.Add(step.System(), 1, step.time);
  prod_.Add(prod, 1, step.time);
  std::erase_if(pods_, [&](const auto& entry) {
    return step.time - entry.second.last_seen > options_.gc_after_s;
  });
}

Prediction KoordinatorModel::Predict(int64_t now) const {
  Prediction out;
  if (!observed_) return out;
  out.known = true;
  double pod_peak = 0;
  for (const auto& [uid, model] : pods_) {
    // Only the pods of the latest step are on the node; the others await garbage collection
    // (their histograms are kept a while for a pod that comes back).
    if (model.last_seen != last_step_) continue;
    const double p = options_.margin * model.histogram.Percentile(options_.percentile);
    out.pods[uid] = p;
    const bool cold = now - model.started < options_.cold_start_s;
    pod_peak += cold ? model.request : p;
  }
  const double prod = options_.margin * prod_.Percentile(options_.percentile);
  const double priority_peak = options_.margin * system_.Percentile(options_.percentile) + prod;
  out.classes[PriorityClass::kProd] = prod;
  out.peak = std::max(pod_peak, priority_peak);
  return out;
}

}  // namespace qrm::advisor
