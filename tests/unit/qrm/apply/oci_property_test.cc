#include "qrm/apply/oci_property.h"

#include <catch2/catch.hpp>

#include "qrm/apply/container_update.h"
#include "tests/unit/qrm/apply/apply_test_util.h"

namespace qrm::apply {
namespace {

using Catch::Matchers::Contains;
using testing::Alloc;

TEST_CASE("OciProperty names are the CRI Go field names and round-trip", "[apply][property]") {
  CHECK(OciPropertyName(OciProperty::kCpusetCpus) == "CpusetCpus");
  CHECK(OciPropertyName(OciProperty::kMemorySwapLimitInBytes) == "MemorySwapLimitInBytes");
  CHECK(OciPropertyName(OciProperty::kHugepageLimits) == "HugepageLimits");
  for (OciProperty p : kAllOciProperties) {
    StatusOr<OciProperty> parsed = ParseOciProperty(OciPropertyName(p));
    REQUIRE(parsed.ok());
    CHECK(*parsed == p);
  }
}

TEST_CASE("ParseOciProperty rejects unknown names and lists the known ones", "[apply][property]") {
  for (const char* bad : {"", "cpusetCpus", "cpuset_cpus", "CpusetCpus ", "Cpus", "Devices"}) {
    StatusOr<OciProperty> parsed = ParseOciProperty(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(parsed.status().message(), Contains("\"" + std::string(bad) + "\""));
    CHECK_THAT(parsed.status().message(), Contains("CpusetMems"));
    CHECK_THAT(parsed.status().message(), Contains("MemorySwapLimitInBytes"));
  }
}

TEST_CASE("BuildContainerUpdate names the resource of an unknown property", "[apply][property]") {
  StatusOr<ContainerUpdate> u = BuildContainerUpdate({{"gpu", Alloc("Devices", "0")}});
  REQUIRE_FALSE(u.ok());
  CHECK(u.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(u.status().message(), Contains("resource \"gpu\""));
  CHECK_THAT(u.status().message(), Contains("\"Devices\""));
}

}  // namespace
}  // namespace qrm::apply
