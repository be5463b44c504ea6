// The plugin's arithmetic, exactly as load_aware.go and helper.go do it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "cluster/loadaware/resource_vector.h"
#include "cluster/loadaware/types.h"

namespace qrm::cluster::loadaware {

// framework.MaxNodeScore.
inline constexpr int64_t kMaxNodeScore = 100;

// isNodeMetricExpired: no update time, or (expiration > 0 and) now - update time >=
// expiration. An update time in the future is not expired.
bool IsMetricExpired(const std::optional<TimePoint>& update_time, int64_t expiration_seconds,
                     TimePoint now);

// int64(math.Round(float64(estimated) / float64(total) * 100)): divided first, then scaled,
// rounded half away from zero; the same double operations as Go, so the same results at the
// .5 boundaries.
int64_t UsagePercent(int64_t estimated, int64_t total);

struct ThresholdExceeded {
  size_t resource = 0;  // index in the vectorizer
  int64_t usage_percent = 0;
  int64_t threshold_percent = 0;
  int64_t estimated = 0;
  int64_t allocatable = 0;
};

// filterNodeUsage: the first resource (in vectorizer order) whose threshold is set (not 0),
// whose allocatable is not 0 and whose usage percent is above the threshold (equal passes).
std::optional<ThresholdExceeded> FirstExceeded(const ResourceVector& thresholds,
                                               const ResourceVector& estimated,
                                               const ResourceVector& allocatable);

// leastUsedScore: (capacity - used) * 100 / capacity, truncated; 0 when capacity is 0 or used
// is above capacity.
int64_t LeastUsedScore(int64_t used, int64_t capacity);

// loadAwareSchedulingScorer over the vectorizer's `count` resources:
//   (sum_i w_i s_i + D * min_i s_i) / (sum_i w_i + D), truncated; 0 when the weights sum to 0.
// min_i runs over every resource of the vectorizer, weighted or not, and starts at 100; with
// D = 0 it does not count.
int64_t LoadAwareScore(int64_t dominant_weight, const ResourceVector& weights,
                       const ResourceVector& used, const ResourceVector& allocatable, size_t count);

}  // namespace qrm::cluster::loadaware
