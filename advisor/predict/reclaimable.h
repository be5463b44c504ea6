// What reclaimed work may be given, from a prediction: the two formulas the issue asks for.
#pragma once

namespace qrm::advisor {

// The node prediction document's Mid tier:
//   Allocatable[Mid] = min(Reclaimable, capacity * threshold_ratio) (+ Unallocated)
//   Reclaimable = max(0, reclaim_ratio * allocated_prod - peak_prod)
//   Unallocated = max(capacity - allocated_prod, 0), only with include_unallocated (the
//   document's "mixed" second version)
struct MidOptions {
  double reclaim_ratio = 1.0;
  double threshold_ratio = 1.0;
  bool include_unallocated = false;
};
double MidAllocatable(double capacity, double allocated_prod, double peak_prod,
                      const MidOptions& options);

// Koordinator's batch allocatable, `usage` policy (its default):
//   batch = capacity - capacity * (100 - reclaim_threshold_percent) / 100 - system_used
//           - high_priority_used
//   system_used = max(node_used - pods_used, node_reserved)
// never below 0. Koordinator's thresholds: 60 % for CPU (the default here), 65 % for memory.
struct BatchUsageOptions {
  double reclaim_threshold_percent = 60;
  double node_reserved = 0;
};
double BatchAllocatableUsage(double capacity, double node_used, double pods_used,
                             double high_priority_used, const BatchUsageOptions& options);

}  // namespace qrm::advisor
