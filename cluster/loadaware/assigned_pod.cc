#include "cluster/loadaware/assigned_pod.h"

#include <string_view>

#include "cluster/loadaware/metric_state.h"
#include "cluster/loadaware/priority.h"

namespace qrm::cluster::loadaware {
namespace {

// FNV-1a, fed field by field; strings and lists carry their length first, so that adjacent
// fields cannot trade bytes.
class Fingerprint {
 public:
  void Bytes(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) hash_ = (hash_ ^ p[i]) * 0x100000001b3ULL;
  }
  void Int(int64_t v) { Bytes(&v, sizeof v); }
  void String(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    Bytes(s.data(), s.size());
  }
  void List(const ResourceList& list) {
    Int(static_cast<int64_t>(list.size()));
    for (const auto& [name, value] : list) {
      String(name);
      Int(value);
    }
  }
  void Resources(const ContainerResources& r) {
    List(r.requests);
    List(r.limits);
  }
  void Time(const std::optional<TimePoint>& t) {
    Int(t ? 1 : 0);
    if (t) Int(t->time_since_epoch().count());
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

}  // namespace

bool IsTerminated(const PodInput& pod) {
  return pod.phase == PodPhase::kSucceeded || pod.phase == PodPhase::kFailed;
}

bool IsAssignable(const PodInput& pod) {
  return !IsTerminated(pod) && !pod.reserve_pod;
}

AssignedPod MakeAssignedPod(const Config& config, const PodInput& pod, TimePoint now) {
  AssignedPod a;
  a.key = PodKey(pod.namespace_, pod.name);
  a.uid = pod.uid;
  const PriorityClass priority = PodPriorityClass(pod);
  a.prod = priority == PriorityClass::kProd;
  StatusOr<ResourceVector> estimate = config.estimator().EstimatePod(pod, priority);
  if (!estimate.ok()) {
    a.error = estimate.status();
  } else if (!IsEmpty(*estimate)) {
    a.estimated = *estimate;
  }
  a.timestamp = pod.scheduled_time.value_or(now);
  a.deadline = config.estimator().EstimationDeadline(pod, a.timestamp);
  a.fingerprint = SpecAndConditionsFingerprint(pod);
  return a;
}

uint64_t SpecAndConditionsFingerprint(const PodInput& pod) {
  Fingerprint f;
  f.String(pod.node_name);
  f.Int(pod.priority ? 1 : 0);
  f.Int(pod.priority.value_or(0));
  f.Int(static_cast<int64_t>(pod.containers.size()));
  for (const ContainerResources& c : pod.containers) f.Resources(c);
  f.Int(static_cast<int64_t>(pod.init_containers.size()));
  for (const InitContainer& c : pod.init_containers) {
    f.Resources(c.resources);
    f.Int(c.restartable ? 1 : 0);
  }
  f.List(pod.overhead);
  f.Int(pod.pod_level_resources ? 1 : 0);
  if (pod.pod_level_resources) f.Resources(*pod.pod_level_resources);
  f.Time(pod.scheduled_time);
  f.Time(pod.initialized_time);
  return f.value();
}

}  // namespace qrm::cluster::loadaware
