#include "cluster/loadaware/formulas.h"

#include <cmath>

namespace qrm::cluster::loadaware {

bool IsMetricExpired(const std::optional<TimePoint>& update_time, int64_t expiration_seconds,
                     TimePoint now) {
  if (!update_time) return true;
  if (expiration_seconds <= 0) return false;
  // time.Since saturates instead of overflowing; so does this.
  int64_t since_ns = 0;
  if (__builtin_sub_overflow(now.time_since_epoch().count(),
                             update_time->time_since_epoch().count(), &since_ns)) {
    since_ns = now > *update_time ? INT64_MAX : INT64_MIN;
  }
  // expiration_seconds <= kMaxDurationSeconds (Validate), so this cannot overflow.
  return since_ns >= expiration_seconds * 1'000'000'000;
}

int64_t UsagePercent(int64_t estimated, int64_t total) {
  return static_cast<int64_t>(
      std::round(static_cast<double>(estimated) / static_cast<double>(total) * 100));
}

std::optional<ThresholdExceeded> FirstExceeded(const ResourceVector& thresholds,
                                               const ResourceVector& estimated,
                                               const ResourceVector& allocatable) {
  for (size_t i = 0; i < kMaxResources; ++i) {
    if (thresholds[i] == 0 || allocatable[i] == 0) continue;
    const int64_t usage = UsagePercent(estimated[i], allocatable[i]);
    if (usage <= thresholds[i]) continue;
    return ThresholdExceeded{i, usage, thresholds[i], estimated[i], allocatable[i]};
  }
  return std::nullopt;
}

int64_t LeastUsedScore(int64_t used, int64_t capacity) {
  if (capacity == 0 || used > capacity) return 0;
  return (capacity - used) * kMaxNodeScore / capacity;
}

int64_t LoadAwareScore(int64_t dominant_weight, const ResourceVector& weights,
                       const ResourceVector& used, const ResourceVector& allocatable,
                       size_t count) {
  int64_t node_score = 0, dominant_score = 0, weight_sum = 0;
  if (dominant_weight != 0) {
    dominant_score = kMaxNodeScore;
    weight_sum = dominant_weight;
  }
  for (size_t i = 0; i < count; ++i) {
    const int64_t score = LeastUsedScore(used[i], allocatable[i]);
    node_score += score * weights[i];
    weight_sum += weights[i];
    if (dominant_score > score) dominant_score = score;
  }
  node_score += dominant_score * dominant_weight;
  if (weight_sum <= 0) return 0;
  return node_score / weight_sum;
}

}  // namespace qrm::cluster::loadaware
