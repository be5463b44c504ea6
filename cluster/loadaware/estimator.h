// Koordinator's DefaultEstimator (estimator/default_estimator.go) and the estimation deadline
// of an assigned pod (podAssignCache.shouldEstimatePodDeadline, pod_assign_cache.go).
//
// A pod's estimate, per resource r with a scaling factor f (the pod's own factors when
// allowCustomizeEstimation is set and its annotation has any, the arguments' for the rest):
//   q = max(request, limit) of r under the pod's priority class name (batch pods read
//       kubernetes.io/batch-cpu, ...; free pods have no name, so 0);
//   q == 0: 250 milli-cpu for cpu and batch-cpu, 200 MiB for memory and batch-memory (not
//           scaled), 0 for any other resource;
//   else    round(q * f / 100) (half away from zero), then at most the limit when it is > 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "cluster/loadaware/args.h"
#include "cluster/loadaware/inputs.h"
#include "cluster/loadaware/priority.h"
#include "cluster/loadaware/resource_vector.h"
#include "common/status.h"

namespace qrm::cluster::loadaware {

// DefaultMilliCPURequest and DefaultMemoryRequest.
inline constexpr int64_t kDefaultMilliCpuRequest = 250;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;
// qrm: a pod's own scaling factor above this (100x) is refused; Koordinator takes any.
inline constexpr int64_t kMaxCustomScalingFactor = 10'000;

class Estimator {
 public:
  Estimator(const LoadAwareArgs& args, const Vectorizer& vectorizer)
      : args_(args), vectorizer_(vectorizer) {}

  // EstimatePod, vectorized. Errors (qrm's input checks, naming the pod and resource): a
  // quantity the estimate reads is negative or above kMaxQuantity, a custom factor is negative
  // or above kMaxCustomScalingFactor, or the estimate is above kMaxQuantity.
  StatusOr<ResourceVector> EstimatePod(const PodInput& pod, PriorityClass priority) const;

  // EstimateNode, vectorized: allocatable, overridden by the raw-allocatable annotation.
  ResourceVector NodeAllocatable(const NodeInput& node) const;

  // Until when an assigned pod stays estimated whatever its reported usage: Initialized time +
  // estimatedSecondsAfterInitialized when that is > 0 and the pod is initialized, else
  // `assigned` + estimatedSecondsAfterPodScheduled when > 0, else none. The pod's annotations
  // replace the arguments (when allowed) unless absent, unparsable or negative.
  std::optional<TimePoint> EstimationDeadline(const PodInput& pod, TimePoint assigned) const;

 private:
  const LoadAwareArgs& args_;
  const Vectorizer& vectorizer_;
};

// strconv.ParseInt(s, 10, 64): an optional sign then decimal digits; nullopt on a syntax or
// range error.
std::optional<int64_t> ParseGoInt64(std::string_view s);

// t + time.Duration(seconds) * time.Second, the product wrapping as Go's does, the sum held
// within TimePoint's range (which Go's time.Time exceeds).
TimePoint AddGoSeconds(TimePoint t, int64_t seconds);

}  // namespace qrm::cluster::loadaware
