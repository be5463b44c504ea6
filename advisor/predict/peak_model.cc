#include "advisor/predict/peak_model.h"

#include <algorithm>

#include <fmt/format.h>

namespace qrm::advisor {
namespace {

double ReclaimedPodsUsage(const Observation& step) {
  double sum = 0;
  for (const PodUsage& p : step.pods) {
    if (!IsProtected(p.priority)) sum += p.usage;
  }
  return sum;
}

}  // namespace

Status PeakModel::SaveState(rapidjson::Value&, JsonAllocator&) const {
  return UnimplementedError(fmt::format("model {}: has no checkpoint state", name()));
}

Status PeakModel::RestoreState(const rapidjson::Value&) {
  return UnimplementedError(fmt::format("model {}: has no checkpoint state", name()));
}

void PeakModel::RetainPods(const std::set<std::string>&) {}

bool IsProtected(PriorityClass c) {
  return c == PriorityClass::kProd;
}

double ProtectedUsage(const Observation& step) {
  return std::max(step.node - ReclaimedPodsUsage(step), 0.0);
}

double ProtectedMax(const Observation& step) {
  // The reclaimed pods' representative samples, not their maxima: the node's highest sample
  // and theirs need not coincide, and subtracting their maxima would understate the peak.
  return std::max(std::max(step.node_max, step.node) - ReclaimedPodsUsage(step), 0.0);
}

}  // namespace qrm::advisor
