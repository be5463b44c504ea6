#include "advisor/predict/reclaimable.h"

#include <algorithm>

namespace qrm::advisor {

double MidAllocatable(double capacity, double allocated_prod, double peak_prod,
                      const MidOptions& options) {
  const double reclaimable = std::max(0.0, options.reclaim_ratio * allocated_prod - peak_prod);
  double mid = std::min(reclaimable, capacity * options.threshold_ratio);
  if (options.include_unallocated) mid += std::max(capacity - allocated_prod, 0.0);
  return mid;
}

double BatchAllocatableUsage(double capacity, double node_used, double pods_used,
                             double high_priority_used, const BatchUsageOptions& options) {
  const double safety = capacity * (100 - options.reclaim_threshold_percent) / 100;
  const double system_used = std::max(node_used - pods_used, options.node_reserved);
  return std::max(capacity - safety - system_used - high_priority_used, 0.0);
}

}  // namespace qrm::advisor
