#include "advisor/predict/koordinator_model.h"

#include <algorithm>
#include <utility>

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
    // Looked up first: a histogram built only to be thrown away costs an allocation per pod
    // and step.
    auto it = pods_.find(pod.uid);
    const bool added = it == pods_.end();
    if (added) it = pods_.emplace(pod.uid, PodModel{DecayedHistogram(options_.histogram)}).first;
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

Status KoordinatorModel::SaveState(rapidjson::Value& out, JsonAllocator& a) const {
  out = NewState(name(), a);
  rapidjson::Value options(rapidjson::kObjectType);
  options.AddMember("histogram", SaveHistogramOptions(options_.histogram, a), a);
  out.AddMember("options", options, a);
  out.AddMember("observed", observed_, a);
  out.AddMember("capacity", DoubleValue(capacity_, a), a);
  out.AddMember("last_step", last_step_, a);
  out.AddMember("system", SaveHistogram(system_, a), a);
  out.AddMember("prod", SaveHistogram(prod_, a), a);
  rapidjson::Value pods(rapidjson::kObjectType);
  for (const auto& [uid, pod] : pods_) pods.AddMember(StringValue(uid, a), SavePod(pod, a), a);
  out.AddMember("pods", pods, a);
  return Status::Ok();
}

rapidjson::Value KoordinatorModel::SavePod(const PodModel& pod, JsonAllocator& a) const {
  rapidjson::Value out(rapidjson::kObjectType);
  out.AddMember("histogram", SaveHistogram(pod.histogram, a), a);
  out.AddMember("request", DoubleValue(pod.request, a), a);
  out.AddMember("started", pod.started, a);
  out.AddMember("last_seen", pod.last_seen, a);
  return out;
}

Status KoordinatorModel::RestoreState(const rapidjson::Value& state) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, OpenState(state, name()));
  QRM_RETURN_IF_ERROR(in.OnlyMembers(
      {"model", "options", "observed", "capacity", "last_step", "system", "prod", "pods"}));
  QRM_ASSIGN_OR_RETURN(const StateReader options, in.Object("options"));
  QRM_RETURN_IF_ERROR(options.OnlyMembers({"histogram"}));
  QRM_RETURN_IF_ERROR(CheckHistogramOptions(options, "histogram", options_.histogram));
  // Into a fresh model, moved in whole at the end: nothing is half-restored.
  KoordinatorModel restored(options_);
  QRM_RETURN_IF_ERROR(in.Bool("observed", &restored.observed_));
  QRM_RETURN_IF_ERROR(in.Double("capacity", &restored.capacity_, 0));
  QRM_RETURN_IF_ERROR(in.Time("last_step", &restored.last_step_));
  QRM_RETURN_IF_ERROR(RestoreHistogram(in, "system", restored.system_));
  QRM_RETURN_IF_ERROR(RestoreHistogram(in, "prod", restored.prod_));
  QRM_RETURN_IF_ERROR(ForEachPod(in, "pods", [&](const std::string& uid, const StateReader& pod) {
    return restored.RestorePod(uid, pod);
  }));
  *this = std::move(restored);
  return Status::Ok();
}

Status KoordinatorModel::RestorePod(const std::string& uid, const StateReader& in) {
  QRM_RETURN_IF_ERROR(in.OnlyMembers({"histogram", "request", "started", "last_seen"}));
  PodModel pod{DecayedHistogram(options_.histogram)};
  QRM_RETURN_IF_ERROR(RestoreHistogram(in, "histogram", pod.histogram));
  QRM_RETURN_IF_ERROR(in.Double("request", &pod.request, 0));
  QRM_RETURN_IF_ERROR(in.Time("started", &pod.started));
  QRM_RETURN_IF_ERROR(in.Time("last_seen", &pod.last_seen));
  pods_.emplace(uid, std::move(pod));
  return Status::Ok();
}

void KoordinatorModel::RetainPods(const std::set<std::string>& uids) {
  std::erase_if(pods_, [&](const auto& entry) { return !uids.contains(entry.first); });
}

}  // namespace qrm::advisor
