// Usage values in 16 bits, for the rings that hold every series' recent samples (two bytes a
// sample is what keeps an hour of 1,000 containers within the advisor's memory budget).
//
// The format is an unsigned float: 6 exponent bits (bias 20) and 10 mantissa bits with an
// implicit leading one, subnormals below 2^-19. Values are rounded to the nearest code, so the
// relative error is at most 2^-11 (0.05 %, far below the noise of a cgroup counter read a
// second apart); the range runs from 2^-29 (smaller values become 0) to about 1.76e13 (larger
// ones are clamped), which covers CPU in cores and memory in bytes. Integers up to 2048 are
// exact. One code is reserved for "no sample".
#pragma once

#include <cstdint>

namespace qrm::advisor {

inline constexpr uint16_t kNoSample = 0xFFFF;

// `value` must be finite; negative values (usage is never negative) are stored as 0.
uint16_t PackUsage(float value);

// The value of a code other than kNoSample.
float UnpackUsage(uint16_t code);

}  // namespace qrm::advisor
