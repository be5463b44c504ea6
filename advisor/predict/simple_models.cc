#include "advisor/predict/simple_models.h"

#include <algorithm>

namespace qrm::advisor {

void BorgDefaultModel::Observe(const Observation& step) {
  observed_ = true;
  capacity_ = step.capacity;
  requested_ = 0;
  bool any_pod = false;
  for (const PodUsage& pod : step.pods) {
    if (!IsProtected(pod.priority)) continue;
    any_pod = true;
    requested_ += pod.request;
  }
  if (!any_pod && step.pods.empty()) requested_ = step.capacity;
}

Prediction BorgDefaultModel::Predict(int64_t) const {
  Prediction out;
  if (!observed_) return out;
  out.known = true;
  out.peak = requested_ / overcommit_;
  out.classes[PriorityClass::kProd] = out.peak;
  return out;
}

ResourceCentralModel::ResourceCentralModel(const ResourceCentralOptions& options)
    : options_(options), system_(options.histogram) {}

void ResourceCentralModel::Observe(const Observation& step) {
  observed_ = true;
  capacity_ = step.capacity;
  last_step_ = step.time;
  system_.Add(step.System(), 1, step.time);
  for (const PodUsage& pod : step.pods) {
    if (!IsProtected(pod.priority)) continue;
    auto [it, added] = pods_.try_emplace(pod.uid, PodModel{DecayedHistogram(options_.histogram)});
    it->second.histogram.Add(pod.usage, 1, step.time);
    it->second.last_seen = step.time;
  }
  std::erase_if(pods_, [&](const auto& entry) {
    return step.time - entry.second.last_seen > options_.gc_after_s;
  });
}

Prediction ResourceCentralModel::Predict(int64_t) const {
  Prediction out;
  if (!observed_) return out;
  out.known = true;
  out.peak = system_.Percentile(options_.percentile);
  for (const auto& [uid, model] : pods_) {
    if (model.last_seen != last_step_) continue;  // not on the node any more
    out.pods[uid] = model.histogram.Percentile(options_.percentile);
    out.peak += out.pods[uid];
  }
  return out;
}

MaxModel::MaxModel(std::string name, std::vector<std::unique_ptr<PeakModel>> models)
    : name_(std::move(name)), models_(std::move(models)) {}

void MaxModel::Observe(const Observation& step) {
  for (auto& m : models_) m->Observe(step);
}

Prediction MaxModel::Predict(int64_t now) const {
  Prediction out;
  for (const auto& m : models_) {
    const Prediction p = m->Predict(now);
    if (!p.known) return Prediction{};  // all or nothing: a max over some models is not theirs
    out.known = true;
    out.peak = std::max(out.peak, p.peak);
    for (const auto& [c, v] : p.classes) out.classes[c] = std::max(out.classes[c], v);
    for (const auto& [uid, v] : p.pods) out.pods[uid] = std::max(out.pods[uid], v);
  }
  return out;
}

}  // namespace qrm::advisor
