// ParseAmount: the quantity spellings a resource request in an annotation may use, read as a
// plain non-negative number.
#include <string>

#include <catch2/catch.hpp>

#include "common/quantity.h"

namespace qrm {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("Amounts with decimal, binary and milli suffixes", "[common][quantity]") {
  struct Case {
    const char* text;
    double value;
  };
  for (const Case& c : {Case{"2", 2}, Case{"1.5", 1.5}, Case{"1500m", 1.5}, Case{"250m", 0.25},
                        Case{"512Mi", 512.0 * 1024 * 1024}, Case{"1Gi", 1024.0 * 1024 * 1024},
                        Case{"2k", 2000}, Case{"3M", 3e6}, Case{"1G", 1e9}, Case{"1e3", 1000},
                        Case{"2E-3", 0.002}, Case{"1Ei", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024},
                        Case{"0", 0}, Case{".5", 0.5}, Case{"5.", 5}}) {
    INFO(c.text);
    auto q = ParseAmount("test", c.text);
    REQUIRE(q.ok());
    CHECK(*q == Approx(c.value));
  }
}

TEST_CASE("Malformed amounts name the source and the value", "[common][quantity]") {
  // "m", "Mi" and "." are zero to upstream's parser; as a request they are typos. "1e3Mi" and
  // "1.5.2" are not quantities at all, upstream included.
  for (const char* bad : {"", "-1", "+1", "abc", "1x", "1 Gi", " 1", "0x10", "inf", "nan", "1Gib",
                          "m", "Mi", ".", "e3", "1e3Mi", "1.5.2", "1ki"}) {
    INFO(bad);
    auto q = ParseAmount("pod annotation qrm.io/cpu-request", bad);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(q.status().message(),
               Contains(std::string("pod annotation qrm.io/cpu-request=\"") + bad + "\""));
  }
  auto negative = ParseAmount("pod annotation qrm.io/cpu-request", "-2");
  CHECK_THAT(negative.status().message(), Contains("must not be negative"));
  auto suffix = ParseAmount("pod annotation qrm.io/cpu-request", "1kM");
  CHECK_THAT(suffix.status().message(), Contains("unknown suffix"));
}

TEST_CASE("An amount beyond the double range is refused, not infinite", "[common][quantity]") {
  auto q = ParseAmount("entry \"x\"", "1e400");
  // Upstream's exponent range stops well before that; whichever check refuses it, the caller
  // never gets an infinite amount.
  REQUIRE_FALSE(q.ok());
  CHECK_THAT(q.status().message(), Contains("entry \"x\"=\"1e400\""));
}

}  // namespace
}  // namespace qrm
