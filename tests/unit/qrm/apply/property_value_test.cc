// Each property through BuildContainerUpdate: the stored (canonical) value, and the error for
// each malformed value naming resource, property and value.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/quote.h"
#include "qrm/apply/container_update.h"
#include "tests/unit/qrm/apply/apply_test_util.h"

namespace qrm::apply {
namespace {

using Catch::Matchers::Contains;
using testing::BuildOne;

// Builds one allocation of `property` = `value` and checks the error names all three.
void CheckRejected(const std::string& property, const std::string& value,
                   const std::string& reason_part = "") {
  INFO(property << " = " << Quote(value));
  StatusOr<ContainerUpdate> u = BuildOne(property, value);
  REQUIRE_FALSE(u.ok());
  CHECK(u.status().code() == StatusCode::kInvalidArgument);
  const std::string& m = u.status().message();
  CHECK_THAT(m, Contains("resource \"res\""));
  CHECK_THAT(m, Contains(property + " value " + Quote(value)));
  if (!reason_part.empty()) CHECK_THAT(m, Contains(reason_part));
}

::runtime::v1::LinuxContainerResources Built(const std::string& property,
                                             const std::string& value) {
  INFO(property << " = " << value);
  StatusOr<ContainerUpdate> u = BuildOne(property, value);
  if (!u.ok()) FAIL(u.status().ToString());
  REQUIRE(u->owned.size() == 1);
  CHECK(OciPropertyName(*u->owned.begin()) == property);
  return u->resources;
}

TEST_CASE("CpusetCpus: list format, stored canonical", "[apply][value]") {
  CHECK(Built("CpusetCpus", "0-3,8-11").cpuset_cpus() == "0-3,8-11");
  CHECK(Built("CpusetCpus", "3,0,1,2,8191").cpuset_cpus() == "0-3,8191");
  CHECK(Built("CpusetCpus", "0,1").cpuset_cpus() == "0-1");

  StatusOr<ContainerUpdate> u = BuildOne("CpusetCpus", "3-1");
  REQUIRE_FALSE(u.ok());
  CHECK(u.status().message() ==
        "resource \"res\": CpusetCpus value \"3-1\": range \"3-1\" starts above its end");
  for (const char* bad : {"", " 0-3", "0-3\n", "0,,1", "-1", "a", "0x1", "8192", "1-", "0:2"}) {
    CheckRejected("CpusetCpus", bad);
  }
}

TEST_CASE("CpusetMems: list format with NUMA ids up to 63", "[apply][value]") {
  CHECK(Built("CpusetMems", "1,0").cpuset_mems() == "0-1");
  CHECK(Built("CpusetMems", "63").cpuset_mems() == "63");
  CheckRejected("CpusetMems", "64", "exceeds the maximum 63");
  for (const char* bad : {"", "0-", "1 ", "0;1", "2-1"}) CheckRejected("CpusetMems", bad);
}

TEST_CASE("Non-negative int64 properties", "[apply][value]") {
  CHECK(Built("CpuPeriod", "100000").cpu_period() == 100000);
  CHECK(Built("CpuShares", "2").cpu_shares() == 2);
  CHECK(Built("CpuShares", "0").cpu_shares() == 0);
  CHECK(Built("MemoryLimitInBytes", "9223372036854775807").memory_limit_in_bytes() == INT64_MAX);
  for (const char* property : {"CpuPeriod", "CpuShares", "MemoryLimitInBytes"}) {
    CheckRejected(property, "-1", "must be >= 0");
    CheckRejected(property, "9223372036854775808", "does not fit in int64");
    CheckRejected(property, "99999999999999999999999", "does not fit in int64");
    for (const char* bad : {"", "+1", " 1", "1 ", "1.5", "1e3", "0x10", "abc", "1Gi"}) {
      CheckRejected(property, bad);
    }
  }
}

TEST_CASE("CpuQuota and MemorySwapLimitInBytes also take -1", "[apply][value]") {
  CHECK(Built("CpuQuota", "-1").cpu_quota() == -1);
  CHECK(Built("CpuQuota", "50000").cpu_quota() == 50000);
  CHECK(Built("MemorySwapLimitInBytes", "-1").memory_swap_limit_in_bytes() == -1);
  CHECK(Built("MemorySwapLimitInBytes", "1073741824").memory_swap_limit_in_bytes() == 1073741824);
  for (const char* property : {"CpuQuota", "MemorySwapLimitInBytes"}) {
    CheckRejected(property, "-2", "must be -1 (no limit) or >= 0");
    CheckRejected(property, "-9223372036854775809", "does not fit in int64");
    for (const char* bad : {"", "--1", "- 1", "unlimited", "1k"}) CheckRejected(property, bad);
  }
}

TEST_CASE("OomScoreAdj: integer in [-1000, 1000]", "[apply][value]") {
  CHECK(Built("OomScoreAdj", "-1000").oom_score_adj() == -1000);
  CHECK(Built("OomScoreAdj", "1000").oom_score_adj() == 1000);
  CHECK(Built("OomScoreAdj", "0").oom_score_adj() == 0);
  CheckRejected("OomScoreAdj", "1001", "must be in [-1000, 1000]");
  CheckRejected("OomScoreAdj", "-1001", "must be in [-1000, 1000]");
  for (const char* bad : {"", "+5", "5.0", "high"}) CheckRejected("OomScoreAdj", bad);
}

TEST_CASE("HugepageLimits: PAGESIZE:LIMIT list, stored sorted by page size", "[apply][value]") {
  auto r = Built("HugepageLimits", "1GB:0,2MB:1073741824,64KB:18446744073709551615");
  REQUIRE(r.hugepage_limits_size() == 3);
  CHECK(r.hugepage_limits(0).page_size() == "64KB");
  CHECK(r.hugepage_limits(0).limit() == UINT64_MAX);
  CHECK(r.hugepage_limits(1).page_size() == "2MB");
  CHECK(r.hugepage_limits(1).limit() == 1073741824);
  CHECK(r.hugepage_limits(2).page_size() == "1GB");
  CHECK(r.hugepage_limits(2).limit() == 0);
  CHECK(Built("HugepageLimits", "16GB:0").hugepage_limits(0).page_size() == "16GB");

  CheckRejected("HugepageLimits", "2MB:1,2MB:2", "page size \"2MB\" appears more than once");
  CheckRejected("HugepageLimits", "2MB:-1", "limit \"-1\" for 2MB is not a decimal integer");
  CheckRejected("HugepageLimits", "2MB:18446744073709551616", "does not fit in uint64");
  CheckRejected("HugepageLimits", "3MB:1", "page size \"3MB\" is not a hugepage size");
  for (const char* bad :
       {"", "2MB", "2MB:", ":1", "2MB:1,", ",2MB:1", "2mb:1", "2M:1", "2048KB:1", "1024MB:1",
        "02MB:1", "0MB:1", "2 MB:1", "2MB: 1", "2MB:1:2", "2MiB:1", "1TB:1"}) {
    CheckRejected("HugepageLimits", bad);
  }
}

TEST_CASE("Unified: JSON object of strings", "[apply][value]") {
  auto r = Built("Unified", R"({"memory.high":"1073741824","cpu.weight":"100"})");
  REQUIRE(r.unified_size() == 2);
  CHECK(r.unified().at("memory.high") == "1073741824");
  CHECK(r.unified().at("cpu.weight") == "100");
  CHECK(Built("Unified", "{}").unified_size() == 0);

  CheckRejected("Unified", R"({"memory.high":1})", "value of key \"memory.high\" is not a string");
  CheckRejected("Unified", R"({"a.b":"1","a.b":"2"})", "key \"a.b\" appears twice");
  CheckRejected("Unified", R"({"../x":"1"})", "contains '/'");
  CheckRejected("Unified", R"({"":"1"})", "empty key");
  CheckRejected("Unified", R"({"a\u0000b":"1"})", "contains NUL");
  CheckRejected("Unified", R"(["memory.high"])", "is not a JSON object");
  for (const char* bad : {"", "{", "null", "\"x\"", R"({"a":"1"} x)", R"({"a":{"b":"c"}})",
                          R"({'a':'1'})", "{\"a\":\"\xff\"}"}) {
    CheckRejected("Unified", bad);
  }
}

}  // namespace
}  // namespace qrm::apply
