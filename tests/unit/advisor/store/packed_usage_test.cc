// The 16-bit usage format: exact where promised (0, integers up to 2048, powers of two in
// range), within 2^-11 relative error everywhere else across its whole range, monotonic,
// clamped at both ends, and never the "no sample" code.
#include "advisor/store/packed_usage.h"

#include <cmath>

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

TEST_CASE("packed usage is exact for zero, small integers and powers of two", "[advisor][store]") {
  CHECK(PackUsage(0) == 0);
  CHECK(UnpackUsage(0) == 0);
  for (int i = 1; i <= 2048; ++i) {
    CHECK(UnpackUsage(PackUsage(static_cast<float>(i))) == static_cast<float>(i));
  }
  for (int e = -19; e <= 43; ++e) {
    const float v = std::ldexp(1.0f, e);
    CHECK(UnpackUsage(PackUsage(v)) == v);
  }
}

TEST_CASE("packed usage keeps 11 significant bits across its range", "[advisor][store]") {
  // CPU in cores (a thousandth to hundreds) and memory in bytes (KiB to TiB).
  for (double v = 1e-5; v < 1e13; v *= 1.0137) {
    const float value = static_cast<float>(v);
    const float back = UnpackUsage(PackUsage(value));
    INFO("value " << value << " back " << back);
    CHECK(std::fabs(back - value) <= value * std::ldexp(1.0f, -11) * 1.0001f);
  }
}

TEST_CASE("packed usage is monotonic and clamped at both ends", "[advisor][store]") {
  uint16_t previous = 0;
  for (double v = 1e-10; v < 1e15; v *= 1.001) {
    const uint16_t code = PackUsage(static_cast<float>(v));
    CHECK(code >= previous);
    CHECK(code != kNoSample);
    previous = code;
  }
  CHECK(PackUsage(-3.5f) == 0);
  CHECK(PackUsage(1e-12f) == 0);
  CHECK(PackUsage(1e30f) == kNoSample - 1);
  CHECK(UnpackUsage(kNoSample - 1) > 1.7e13f);
  // Subnormal codes: steps of 2^-29 below 2^-19, rounding to the nearest.
  CHECK(UnpackUsage(PackUsage(std::ldexp(3.0f, -29))) == std::ldexp(3.0f, -29));
  CHECK(UnpackUsage(PackUsage(std::ldexp(3.4f, -29))) == std::ldexp(3.0f, -29));
}

}  // namespace
}  // namespace qrm::advisor
