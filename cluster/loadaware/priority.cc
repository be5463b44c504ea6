#include "cluster/loadaware/priority.h"

#include <cstdint>

namespace qrm::cluster::loadaware {
namespace {

// GetPodPriorityClassByName: only the four known names count.
PriorityClass ByName(std::string_view name) {
  if (name == "koord-prod") return PriorityClass::kProd;
  if (name == "koord-mid") return PriorityClass::kMid;
  if (name == "koord-batch") return PriorityClass::kBatch;
  if (name == "koord-free") return PriorityClass::kFree;
  return PriorityClass::kNone;
}

// getPriorityClassByPriority with the default bands.
PriorityClass ByPriorityValue(int32_t p) {
  if (p >= 9000 && p <= 9999) return PriorityClass::kProd;
  if (p >= 7000 && p <= 7999) return PriorityClass::kMid;
  if (p >= 5000 && p <= 5999) return PriorityClass::kBatch;
  if (p >= 3000 && p <= 3999) return PriorityClass::kFree;
  return PriorityClass::kNone;
}

bool HasPositiveCpuOrMemory(const ContainerResources& r) {
  for (const ResourceList* list : {&r.requests, &r.limits}) {
    for (std::string_view name : {kCpu, kMemory}) {
      auto it = list->find(name);
      if (it != list->end() && it->second > 0) return true;
    }
  }
  return false;
}

// kubectl's ComputePodQOS, reduced to the one question the priority needs: BestEffort (no
// container or init container asks for cpu or memory) or not (Guaranteed and Burstable both
// map to prod).
bool ComputedBestEffort(const PodInput& pod) {
  for (const ContainerResources& c : pod.containers) {
    if (HasPositiveCpuOrMemory(c)) return false;
  }
  for (const InitContainer& c : pod.init_containers) {
    if (HasPositiveCpuOrMemory(c.resources)) return false;
  }
  return true;
}

// GetPodPriorityClassWithQoS(GetPodQoSClassWithDefault(pod)).
PriorityClass ByQoS(const PodInput& pod) {
  if (pod.qos_class_label) {
    const std::string& q = *pod.qos_class_label;
    if (q == "SYSTEM" || q == "LSE" || q == "LSR" || q == "LS") return PriorityClass::kProd;
    if (q == "BE") return PriorityClass::kBatch;
    // An unknown label value counts as no label.
  }
  if (!pod.qos_class.empty()) {
    if (pod.qos_class == "Guaranteed" || pod.qos_class == "Burstable") return PriorityClass::kProd;
    if (pod.qos_class == "BestEffort") return PriorityClass::kBatch;
    return PriorityClass::kNone;
  }
  return ComputedBestEffort(pod) ? PriorityClass::kBatch : PriorityClass::kProd;
}

}  // namespace

std::string_view PriorityClassName(PriorityClass priority) {
  switch (priority) {
    case PriorityClass::kProd: return "koord-prod";
    case PriorityClass::kMid: return "koord-mid";
    case PriorityClass::kBatch: return "koord-batch";
    case PriorityClass::kFree: return "koord-free";
    case PriorityClass::kNone: break;
  }
  return "";
}

PriorityClass PodPriorityClass(const PodInput& pod) {
  PriorityClass raw = PriorityClass::kNone;
  if (pod.priority_class_label) {
    raw = ByName(*pod.priority_class_label);  // the label wins even when spec.priority is set
  } else if (pod.priority) {
    raw = ByPriorityValue(*pod.priority);
  }
  return raw != PriorityClass::kNone ? raw : ByQoS(pod);
}

std::string_view TranslateResourceName(PriorityClass priority, std::string_view name) {
  switch (priority) {
    case PriorityClass::kProd:
    case PriorityClass::kNone: return name;
    case PriorityClass::kBatch:
      if (name == kCpu) return kBatchCpu;
      if (name == kMemory) return kBatchMemory;
      return "";
    case PriorityClass::kMid:
      if (name == kCpu) return kMidCpu;
      if (name == kMemory) return kMidMemory;
      return "";
    case PriorityClass::kFree: return "";
  }
  return "";
}

}  // namespace qrm::cluster::loadaware
