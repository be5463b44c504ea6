#include "advisor/predict/nsigma_model.h"

#include <algorithm>

namespace qrm::advisor {

NSigmaModel::NSigmaModel(const NSigmaOptions& options, bool per_pod)
    : options_(options),
      per_pod_(per_pod),
      node_(options.half_life_s),
      system_(options.half_life_s) {}

void NSigmaModel::Observe(const Observation& step) {
  capacity_ = step.capacity;
  last_step_ = step.time;
  node_.Add(ProtectedUsage(step), step.time);
  if (!per_pod_) return;
  system_.Add(step.System(), step.time);
  for (const PodUsage& pod : step.pods) {
    if (!IsProtected(pod.priority)) continue;
    auto [it, added] = pods_.try_emplace(pod.uid, PodModel{DecayedMoments(options_.half_life_s)});
    it->second.moments.Add(pod.usage, step.time);
    it->second.last_seen = step.time;
  }
  std::erase_if(pods_, [&](const auto& entry) {
    return step.time - entry.second.last_seen > options_.gc_after_s;
  });
}

Prediction NSigmaModel::Predict(int64_t) const {
  Prediction out;
  if (node_.empty()) return out;
  out.known = true;
  out.peak = Sigma(node_);
  if (!per_pod_) return out;
  double pods = Sigma(system_);
  for (const auto& [uid, model] : pods_) {
    if (model.last_seen != last_step_) continue;  // not on the node any more
    out.pods[uid] = Sigma(model.moments);
    pods += out.pods[uid];
  }
  out.peak = std::max(out.peak, pods);
  return out;
}

}  // namespace qrm::advisor
