// Arithmetic every advisor layer shares, so that the models, the replay and the metric store
// agree to the sample: the nearest-rank quantile and rounding times down to a grid.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace qrm::advisor {

// The q-quantile of `values` by nearest rank, rounding up (conservative): the value of rank
// ceil(q * n), at least 1; q is clamped to [0, 1]. Reorders `values` (nth_element). `values`
// must not be empty.
template <typename T>
T NearestRank(std::vector<T>& values, double q) {
  const auto rank =
      static_cast<size_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size())));
  const size_t k = std::clamp<size_t>(rank, 1, values.size()) - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

// a / b rounded towards minus infinity (b > 0), also for negative a.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && a < 0 ? 1 : 0);
}

// The largest multiple of `step` (> 0) that is <= t.
inline int64_t FloorToMultiple(int64_t t, int64_t step) {
  return FloorDiv(t, step) * step;
}

}  // namespace qrm::advisor
