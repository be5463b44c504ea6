#include "advisor/predict/peak_model.h"

#include <algorithm>

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
