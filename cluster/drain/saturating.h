// Amounts add up saturating in the drain planner: a dump whose requests or NUMA amounts
// overflow int64 is absurd, not a reason to wrap around (or for undefined behaviour).
#pragma once

#include <cstdint>
#include <limits>

namespace qrm::cluster::drain {

inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

}  // namespace qrm::cluster::drain
