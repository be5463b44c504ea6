#include "advisor/predict/nsigma_model.h"

#include <algorithm>
#include <utility>

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

Status NSigmaModel::SaveState(rapidjson::Value& out, JsonAllocator& a) const {
  out = NewState(name(), a);
  rapidjson::Value options(rapidjson::kObjectType);
  options.AddMember("half_life_s", DoubleValue(options_.half_life_s, a), a);
  out.AddMember("options", options, a);
  out.AddMember("capacity", DoubleValue(capacity_, a), a);
  out.AddMember("last_step", last_step_, a);
  out.AddMember("node", SaveMoments(node_, a), a);
  out.AddMember("system", SaveMoments(system_, a), a);
  rapidjson::Value pods(rapidjson::kObjectType);
  for (const auto& [uid, pod] : pods_) {
    rapidjson::Value v(rapidjson::kObjectType);
    v.AddMember("moments", SaveMoments(pod.moments, a), a);
    v.AddMember("last_seen", pod.last_seen, a);
    pods.AddMember(StringValue(uid, a), v, a);
  }
  out.AddMember("pods", pods, a);
  return Status::Ok();
}

Status NSigmaModel::RestoreState(const rapidjson::Value& state) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, OpenState(state, name()));
  QRM_RETURN_IF_ERROR(
      in.OnlyMembers({"model", "options", "capacity", "last_step", "node", "system", "pods"}));
  QRM_ASSIGN_OR_RETURN(const StateReader options, in.Object("options"));
  QRM_RETURN_IF_ERROR(options.OnlyMembers({"half_life_s"}));
  QRM_RETURN_IF_ERROR(SameOption(options, "half_life_s", options_.half_life_s));
  // Into a fresh model, moved in whole at the end: nothing is half-restored.
  NSigmaModel restored(options_, per_pod_);
  QRM_RETURN_IF_ERROR(in.Double("capacity", &restored.capacity_, 0));
  QRM_RETURN_IF_ERROR(in.Time("last_step", &restored.last_step_));
  QRM_RETURN_IF_ERROR(RestoreMoments(in, "node", restored.node_));
  QRM_RETURN_IF_ERROR(RestoreMoments(in, "system", restored.system_));
  QRM_RETURN_IF_ERROR(ForEachPod(in, "pods", [&](const std::string& uid, const StateReader& pod) {
    return restored.RestorePod(uid, pod);
  }));
  *this = std::move(restored);
  return Status::Ok();
}

Status NSigmaModel::RestorePod(const std::string& uid, const StateReader& in) {
  QRM_RETURN_IF_ERROR(in.OnlyMembers({"moments", "last_seen"}));
  PodModel pod{DecayedMoments(options_.half_life_s)};
  QRM_RETURN_IF_ERROR(RestoreMoments(in, "moments", pod.moments));
  QRM_RETURN_IF_ERROR(in.Time("last_seen", &pod.last_seen));
  pods_.emplace(uid, pod);
  return Status::Ok();
}

void NSigmaModel::RetainPods(const std::set<std::string>& uids) {
  std::erase_if(pods_, [&](const auto& entry) { return !uids.contains(entry.first); });
}

}  // namespace qrm::advisor
