// The policy file source: the first load must succeed; a reload applies a changed valid
// policy, keeps the last good one on a bad or unreadable file and says so once per distinct
// mistake, and a fix applies again.
#include "advisor/guard/policy_source.h"

#include <cstdio>

#include <catch2/catch.hpp>

#include "testing/temp_dir.h"

namespace qrm::advisor::guard {
namespace {

std::string PolicyJson(int watermark_percent) {
  return R"({"objectiveEnsurances": [{"name": "cpu", "metricRule": {"name": "cpu_total_usage",
             "value": ")" +
         std::to_string(watermark_percent) + R"(%"}}]})";
}

const char* const kBadJson =
    R"({"objectiveEnsurances": [{"name": "cpu", "metricRule": {"name": "cpu_total_usage",
        "value": "80 %"}}]})";

// Replaces the file as an editor or a ConfigMap update does: a new file renamed over it.
void Replace(const std::string& path, const std::string& content) {
  qrm::testing::WriteFile(path + ".tmp", content);
  REQUIRE(std::rename((path + ".tmp").c_str(), path.c_str()) == 0);
}

double Watermark(const PolicySource& source) {
  return source.policy().ensurances.at(0).watermark.value;
}

TEST_CASE("the first policy load failing is an error naming the file", "[advisor][guard]") {
  qrm::testing::TempDir dir;
  PolicySource missing(dir.File("guard.json"));
  const Status absent = missing.Load();
  CHECK(absent.code() == StatusCode::kNotFound);
  CHECK(absent.message().find(dir.File("guard.json")) != std::string::npos);
  Replace(dir.File("guard.json"), kBadJson);
  PolicySource bad(dir.File("guard.json"));
  const Status invalid = bad.Load();
  CHECK(invalid.code() == StatusCode::kInvalidArgument);
  CHECK(invalid.message().find("objectiveEnsurances[0].metricRule.value") != std::string::npos);
  CHECK(invalid.message().find(dir.File("guard.json")) != std::string::npos);
}

TEST_CASE("policy reload keeps the last good policy and reports a bad one once then applies a fix",
          "[advisor][guard]") {
  qrm::testing::TempDir dir;
  const std::string path = dir.File("guard.json");
  Replace(path, PolicyJson(80));
  PolicySource source(path);
  REQUIRE(source.Load().ok());
  CHECK(Watermark(source) == 80);
  CHECK(source.Reload().result == ReloadResult::kUnchanged);

  Replace(path, PolicyJson(70));
  CHECK(source.Reload().result == ReloadResult::kApplied);
  CHECK(Watermark(source) == 70);

  Replace(path, kBadJson);
  const PolicyReload rejected = source.Reload();
  CHECK(rejected.result == ReloadResult::kRejected);
  CHECK(rejected.error.message().find(path + ": kept the last good policy") != std::string::npos);
  CHECK(rejected.error.message().find("80 %") != std::string::npos);
  CHECK(Watermark(source) == 70);
  // The same bad content, read again or not: already said.
  CHECK(source.Reload().result == ReloadResult::kStillRejected);
  Replace(path, kBadJson);
  CHECK(source.Reload().result == ReloadResult::kStillRejected);
  CHECK(Watermark(source) == 70);

  Replace(path, PolicyJson(60));
  CHECK(source.Reload().result == ReloadResult::kApplied);
  CHECK(Watermark(source) == 60);
}

TEST_CASE("policy reload of the same policy or of a deleted file changes nothing",
          "[advisor][guard]") {
  qrm::testing::TempDir dir;
  const std::string path = dir.File("guard.json");
  Replace(path, PolicyJson(80));
  PolicySource source(path);
  REQUIRE(source.Load().ok());
  Replace(path, PolicyJson(80) + "\n\n");  // layout only: the same policy
  CHECK(source.Reload().result == ReloadResult::kUnchanged);
  REQUIRE(std::remove(path.c_str()) == 0);
  const PolicyReload gone = source.Reload();
  CHECK(gone.result == ReloadResult::kRejected);
  CHECK(gone.error.code() == StatusCode::kNotFound);
  CHECK(source.Reload().result == ReloadResult::kStillRejected);
  CHECK(Watermark(source) == 80);
  // Back with the last good content: no longer rejected, nothing to apply.
  Replace(path, PolicyJson(80) + "\n\n");
  CHECK(source.Reload().result == ReloadResult::kUnchanged);
  Replace(path, kBadJson);
  CHECK(source.Reload().result == ReloadResult::kRejected);  // a new mistake is said again
}

}  // namespace
}  // namespace qrm::advisor::guard
