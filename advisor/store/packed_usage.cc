#include "advisor/store/packed_usage.h"

#include <bit>
#include <cmath>

namespace qrm::advisor {
namespace {

constexpr int kMantissaBits = 10;
constexpr int kBias = 20;
constexpr int kFloatMantissaBits = 23;
constexpr int kFloatBias = 127;
constexpr uint16_t kLargest = kNoSample - 1;

}  // namespace

uint16_t PackUsage(float value) {
  if (!(value > 0)) return 0;
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const int exponent = static_cast<int>(bits >> kFloatMantissaBits) - kFloatBias + kBias;
  if (exponent <= 0) {
    // Subnormal here: the value in units of the smallest code, 2^(1 - kBias - kMantissaBits).
    // A value that rounds up to 1024 units is the smallest normal code, which is 1024.
    return static_cast<uint16_t>(std::nearbyint(std::ldexp(value, kBias - 1 + kMantissaBits)));
  }
  // Re-bias the exponent and round the mantissa to the nearest (a carry out of the mantissa
  // correctly bumps the exponent).
  const uint32_t rebased = (static_cast<uint32_t>(exponent) << kFloatMantissaBits) |
                           (bits & ((1u << kFloatMantissaBits) - 1));
  constexpr int kDropped = kFloatMantissaBits - kMantissaBits;
  const uint32_t code = (rebased + (1u << (kDropped - 1))) >> kDropped;
  return code > kLargest ? kLargest : static_cast<uint16_t>(code);
}

float UnpackUsage(uint16_t code) {
  const uint32_t exponent = code >> kMantissaBits;
  const uint32_t mantissa = code & ((1u << kMantissaBits) - 1);
  if (exponent == 0) {
    return std::ldexp(static_cast<float>(mantissa), 1 - kBias - kMantissaBits);
  }
  const uint32_t bits = ((exponent - kBias + kFloatBias) << kFloatMantissaBits) |
                        (mantissa << (kFloatMantissaBits - kMantissaBits));
  return std::bit_cast<float>(bits);
}

}  // namespace qrm::advisor
