// ParseQuantity: Kubernetes quantity spellings used in override annotations.
#include "cri-shim/quantity.h"

#include <catch2/catch.hpp>

namespace qrm::shim {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("Quantities with decimal, binary and milli suffixes", "[cri_shim][quantity]") {
  struct Case {
    const char* text;
    double value;
  };
  for (const Case& c :
       {Case{"2", 2}, Case{"1.5", 1.5}, Case{"1500m", 1.5}, Case{"250m", 0.25},
        Case{"512Mi", 512.0 * 1024 * 1024}, Case{"1Gi", 1024.0 * 1024 * 1024}, Case{"2k", 2000},
        Case{"3M", 3e6}, Case{"1G", 1e9}, Case{"1e3", 1000},
        Case{"1Ei", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024}, Case{"0", 0}, Case{".5", 0.5}}) {
    INFO(c.text);
    auto q = ParseQuantity("test", c.text);
    REQUIRE(q.ok());
    CHECK(*q == Approx(c.value));
  }
}

TEST_CASE("Malformed quantities name the source and the value", "[cri_shim][quantity]") {
  for (const char* bad : {"", "-1", "abc", "1x", "1 Gi", "0x10", "inf", "nan", "1Gib", "m"}) {
    INFO(bad);
    auto q = ParseQuantity("pod annotation qrm.io/cpu-request", bad);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(q.status().message(),
               Contains(std::string("pod annotation qrm.io/cpu-request=\"") + bad + "\""));
  }
}

}  // namespace
}  // namespace qrm::shim
