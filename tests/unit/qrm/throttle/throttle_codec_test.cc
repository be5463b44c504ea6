#include "qrm/throttle/throttle_codec.h"

#include <catch2/catch.hpp>

namespace qrm::throttle {
namespace {

CpuThrottle Sample() {
  CpuThrottle t;
  t.pod_uid = "uid-1";
  t.container = "app";
  t.quota_us = 50000;
  t.restore_quota_us = -1;
  t.since_unix = 10;
  t.expires_unix = 70;
  t.owner = "qrm-advisor";
  t.reason = "cpu-usage";
  return t;
}

StatusOr<std::vector<CpuThrottle>> DecodeText(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return DecodeThrottles(d);
}

TEST_CASE("the throttle file round-trips", "[throttle]") {
  CpuThrottle restoring = Sample();
  restoring.container = "sidecar";
  restoring.restoring = true;
  rapidjson::Document d;
  EncodeThrottles({Sample(), restoring}, d);
  auto back = DecodeThrottles(d);
  REQUIRE(back.ok());
  CHECK(*back == std::vector<CpuThrottle>{Sample(), restoring});
}

// The API takes any pod uid and container name (only the owner and reason are plain text): one
// with a NUL byte must come back whole, or the throttle would be restored onto another pod.
TEST_CASE("a pod uid and container name with a NUL byte round-trip whole", "[throttle]") {
  CpuThrottle t = Sample();
  t.pod_uid = std::string("uid\0tail", 8);
  t.container = std::string("app\0x", 5);
  rapidjson::Document d;
  EncodeThrottles({t}, d);
  auto back = DecodeThrottles(d);
  REQUIRE(back.ok());
  REQUIRE(back->size() == 1);
  CHECK(back->front().pod_uid.size() == 8);
  CHECK(back->front() == t);
}

TEST_CASE("a damaged throttle file names the location", "[throttle]") {
  const std::string good =
      R"({"pod_uid":"u","container":"c","quota_us":5000,"period_us":100000,)"
      R"("restore_quota_us":-1,"restore_period_us":100000,"since_unix":1,"expires_unix":2,)"
      R"("owner":"o","reason":"r","restoring":false})";
  REQUIRE(DecodeText(R"({"throttles":[)" + good + "]}").ok());
  auto unknown = DecodeText(R"({"throttles":[{"extra":1}]})");
  CHECK(unknown.status().code() == StatusCode::kDataLoss);
  CHECK_THAT(unknown.status().message(), Catch::Contains("throttles[0].extra"));
  std::string bad_quota = good;
  bad_quota.replace(bad_quota.find("5000"), 4, "\"5\"");
  auto quota = DecodeText(R"({"throttles":[)" + bad_quota + "]}");
  CHECK_THAT(quota.status().message(), Catch::Contains("throttles[0].quota_us"));
  std::string low = good;
  low.replace(low.find("5000"), 4, "10");
  auto too_low = DecodeText(R"({"throttles":[)" + good + "," + low + "]}");
  CHECK_THAT(too_low.status().message(), Catch::Contains("throttles[1]"));
  auto twice = DecodeText(R"({"throttles":[)" + good + "," + good + "]}");
  CHECK_THAT(twice.status().message(), Catch::Contains("listed twice"));
  CHECK_FALSE(DecodeText(R"({"throttles":{}})").ok());
}

}  // namespace
}  // namespace qrm::throttle
