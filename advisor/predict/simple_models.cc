#include "advisor/predict/simple_models.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include <fmt/format.h>

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
    // Looked up first: a histogram built only to be thrown away costs an allocation per pod
    // and step.
    auto it = pods_.find(pod.uid);
    if (it == pods_.end()) {
      it = pods_.emplace(pod.uid, PodModel{DecayedHistogram(options_.histogram)}).first;
    }
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

Status BorgDefaultModel::SaveState(rapidjson::Value& out, JsonAllocator& a) const {
  // The overcommit only divides the requests at prediction: it does not shape the state.
  out = NewState(name(), a);
  out.AddMember("observed", observed_, a);
  out.AddMember("capacity", DoubleValue(capacity_, a), a);
  out.AddMember("requested", DoubleValue(requested_, a), a);
  return Status::Ok();
}

Status BorgDefaultModel::RestoreState(const rapidjson::Value& state) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, OpenState(state, name()));
  QRM_RETURN_IF_ERROR(in.OnlyMembers({"model", "observed", "capacity", "requested"}));
  BorgDefaultModel restored(overcommit_);
  QRM_RETURN_IF_ERROR(in.Bool("observed", &restored.observed_));
  QRM_RETURN_IF_ERROR(in.Double("capacity", &restored.capacity_, 0));
  QRM_RETURN_IF_ERROR(in.Double("requested", &restored.requested_, 0));
  *this = restored;
  return Status::Ok();
}

Status ResourceCentralModel::SaveState(rapidjson::Value& out, JsonAllocator& a) const {
  out = NewState(name(), a);
  rapidjson::Value options(rapidjson::kObjectType);
  options.AddMember("histogram", SaveHistogramOptions(options_.histogram, a), a);
  out.AddMember("options", options, a);
  out.AddMember("observed", observed_, a);
  out.AddMember("capacity", DoubleValue(capacity_, a), a);
  out.AddMember("last_step", last_step_, a);
  out.AddMember("system", SaveHistogram(system_, a), a);
  rapidjson::Value pods(rapidjson::kObjectType);
  for (const auto& [uid, pod] : pods_) {
    rapidjson::Value v(rapidjson::kObjectType);
    v.AddMember("histogram", SaveHistogram(pod.histogram, a), a);
    v.AddMember("last_seen", pod.last_seen, a);
    pods.AddMember(StringValue(uid, a), v, a);
  }
  out.AddMember("pods", pods, a);
  return Status::Ok();
}

Status ResourceCentralModel::RestoreState(const rapidjson::Value& state) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, OpenState(state, name()));
  QRM_RETURN_IF_ERROR(
      in.OnlyMembers({"model", "options", "observed", "capacity", "last_step", "system", "pods"}));
  QRM_ASSIGN_OR_RETURN(const StateReader options, in.Object("options"));
  QRM_RETURN_IF_ERROR(options.OnlyMembers({"histogram"}));
  QRM_RETURN_IF_ERROR(CheckHistogramOptions(options, "histogram", options_.histogram));
  // Into a fresh model, moved in whole at the end: nothing is half-restored.
  ResourceCentralModel restored(options_);
  QRM_RETURN_IF_ERROR(in.Bool("observed", &restored.observed_));
  QRM_RETURN_IF_ERROR(in.Double("capacity", &restored.capacity_, 0));
  QRM_RETURN_IF_ERROR(in.Time("last_step", &restored.last_step_));
  QRM_RETURN_IF_ERROR(RestoreHistogram(in, "system", restored.system_));
  QRM_RETURN_IF_ERROR(ForEachPod(in, "pods", [&](const std::string& uid, const StateReader& pod) {
    return restored.RestorePod(uid, pod);
  }));
  *this = std::move(restored);
  return Status::Ok();
}

Status ResourceCentralModel::RestorePod(const std::string& uid, const StateReader& in) {
  QRM_RETURN_IF_ERROR(in.OnlyMembers({"histogram", "last_seen"}));
  PodModel pod{DecayedHistogram(options_.histogram)};
  QRM_RETURN_IF_ERROR(RestoreHistogram(in, "histogram", pod.histogram));
  QRM_RETURN_IF_ERROR(in.Time("last_seen", &pod.last_seen));
  pods_.emplace(uid, std::move(pod));
  return Status::Ok();
}

void ResourceCentralModel::RetainPods(const std::set<std::string>& uids) {
  std::erase_if(pods_, [&](const auto& entry) { return !uids.contains(entry.first); });
}

Status MaxModel::SaveState(rapidjson::Value& out, JsonAllocator& a) const {
  rapidjson::Value members(rapidjson::kArrayType);
  for (const auto& m : models_) {
    rapidjson::Value member;
    QRM_RETURN_IF_ERROR(m->SaveState(member, a));
    members.PushBack(member, a);
  }
  out = NewState(name(), a);
  out.AddMember("members", members, a);
  return Status::Ok();
}

Status MaxModel::RestoreState(const rapidjson::Value& state) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, OpenState(state, name()));
  QRM_RETURN_IF_ERROR(in.OnlyMembers({"model", "members"}));
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* members, in.Array("members"));
  if (members->Size() != models_.size()) {
    return Malformed(in.PathOf("members"), *members,
                     fmt::format("an array of {} member states", models_.size()));
  }
  // Each member's restore is all or nothing; when one refuses, the members restored before it
  // get back the state saved here.
  rapidjson::Document before;
  std::vector<rapidjson::Value> saved(models_.size());
  for (size_t i = 0; i < models_.size(); ++i) {
    QRM_RETURN_IF_ERROR(models_[i]->SaveState(saved[i], before.GetAllocator()));
  }
  for (size_t i = 0; i < models_.size(); ++i) {
    const Status status = models_[i]->RestoreState((*members)[static_cast<rapidjson::SizeType>(i)]);
    if (status.ok()) continue;
    for (size_t j = 0; j < i; ++j) {
      [[maybe_unused]] const Status undone = models_[j]->RestoreState(saved[j]);
      assert(undone.ok());  // its own state, just saved
    }
    return status.WithContext(fmt::format("{}[{}]", in.PathOf("members"), i));
  }
  return Status::Ok();
}

void MaxModel::RetainPods(const std::set<std::string>& uids) {
  for (auto& m : models_) m->RetainPods(uids);
}

}  // namespace qrm::advisor
