// LoadStateFile: the one policy every plugin follows for its own state file at start.
#include "checkpoint/state_file.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "common/metrics/metrics.h"
#include "testing/temp_dir.h"
#include "tests/unit/checkpoint/checkpoint_test_util.h"

namespace qrm::checkpoint {
namespace {

using Catch::Matchers::Contains;
using testutil::Json;
using testutil::ListDir;

constexpr uint32_t kVersion = 3;

StateFileOptions Options(bool reset = false) {
  StateFileOptions options;
  options.component = "state-file-test";
  options.version = kVersion;
  options.reset_state = reset;
  return options;
}

int CountPrefix(const std::string& dir, const std::string& prefix) {
  const auto names = ListDir(dir);
  return static_cast<int>(std::count_if(
      names.begin(), names.end(), [&](const std::string& n) { return n.rfind(prefix, 0) == 0; }));
}

double Corrupt() {
  return metrics::Default()
      .GetCounter("qrm_checkpoint_corrupt_total", "", {{"component", "state-file-test"}})
      .Value();
}

TEST_CASE("a missing state file starts empty without calling restore", "[checkpoint][state]") {
  qrm::testing::TempDir dir;
  int calls = 0;
  auto load = LoadStateFile(dir.File("sub/state"), Options(), [&](const rapidjson::Value&) {
    ++calls;
    return Status::Ok();
  });
  REQUIRE(load.ok());
  CHECK_FALSE(load->restored);
  CHECK_FALSE(load->corrupt);
  CHECK(calls == 0);
}

TEST_CASE("a good state file is handed to restore", "[checkpoint][state]") {
  qrm::testing::TempDir dir;
  const std::string path = dir.File("state");
  REQUIRE(Write(path, kVersion, Json(R"({"pods": 2})")).ok());
  int pods = 0;
  auto load = LoadStateFile(path, Options(), [&](const rapidjson::Value& data) {
    pods = data["pods"].GetInt();
    return Status::Ok();
  });
  REQUIRE(load.ok());
  CHECK(load->restored);
  CHECK(pods == 2);
  CHECK(CountPrefix(dir.path(), "state.") == 0);
}

TEST_CASE("an unusable state file is moved aside, counted and the start goes on",
          "[checkpoint][state]") {
  qrm::testing::TempDir dir;
  const std::string path = dir.File("state");
  REQUIRE(Write(path, kVersion, Json(R"({"pods": 2})")).ok());
  const std::string good = qrm::testing::ReadFile(path);
  const std::string kind = GENERATE("bit flip", "truncated", "empty", "another version");
  INFO(kind);
  std::string bad;
  if (kind == "bit flip") {
    bad = good;
    bad[bad.size() / 2] ^= 0x01;
  } else if (kind == "truncated") {
    bad = good.substr(0, good.size() - 7);
  } else if (kind == "another version") {
    REQUIRE(Write(path, kVersion + 1, Json(R"({"pods": 2})")).ok());
    bad = qrm::testing::ReadFile(path);
  }
  qrm::testing::WriteFile(path, bad);
  const double before = Corrupt();
  int calls = 0;
  auto load = LoadStateFile(path, Options(), [&](const rapidjson::Value&) {
    ++calls;
    return Status::Ok();
  });
  REQUIRE(load.ok());
  CHECK(load->corrupt);
  CHECK_FALSE(load->restored);
  CHECK(calls == 0);
  CHECK(Corrupt() == before + 1);
  CHECK_THAT(load->problem, Contains(path));
  CHECK(load->set_aside.rfind(path + ".corrupt-", 0) == 0);
  CHECK(qrm::testing::ReadFile(load->set_aside) == bad);
  CHECK(CountPrefix(dir.path(), "state.corrupt-") == 1);
  CHECK(CountPrefix(dir.path(), "state") == 1);  // nothing left at the old name
}

TEST_CASE("content that restore finds malformed is moved aside with restore's words",
          "[checkpoint][state]") {
  qrm::testing::TempDir dir;
  const std::string path = dir.File("state");
  REQUIRE(Write(path, kVersion, Json(R"({"pods": -1})")).ok());
  auto load = LoadStateFile(path, Options(), [](const rapidjson::Value&) {
    return Status(StatusCode::kDataLoss, "pods: -1 is not a count");
  });
  REQUIRE(load.ok());
  CHECK(load->corrupt);
  CHECK_THAT(load->problem, Contains("pods: -1 is not a count") && Contains(path));
  CHECK(CountPrefix(dir.path(), "state.corrupt-") == 1);
}

TEST_CASE("another machine's state file needs --reset-state", "[checkpoint][state]") {
  qrm::testing::TempDir dir;
  const std::string path = dir.File("state");
  REQUIRE(Write(path, kVersion, Json(R"({"nodes": "0-3"})")).ok());
  const std::string original = qrm::testing::ReadFile(path);
  auto other_machine = [](const rapidjson::Value&) {
    return Status(StatusCode::kFailedPrecondition, "written for NUMA nodes 0-3, this has 0-1");
  };
  auto refused = LoadStateFile(path, Options(), other_machine);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(refused.status().message(), Contains("--reset-state") && Contains(path));
  CHECK(qrm::testing::ReadFile(path) == original);  // untouched

  auto reset = LoadStateFile(path, Options(/*reset=*/true), other_machine);
  REQUIRE(reset.ok());
  CHECK_FALSE(reset->corrupt);
  CHECK(CountPrefix(dir.path(), "state.reset-") == 1);
  CHECK(qrm::testing::ReadFile(reset->set_aside) == original);
}

TEST_CASE("set-aside names never overwrite earlier evidence", "[checkpoint][state]") {
  qrm::testing::TempDir dir;
  const std::string path = dir.File("state");
  for (int i = 0; i < 3; ++i) {
    qrm::testing::WriteFile(path, "garbage " + std::to_string(i));
    auto load =
        LoadStateFile(path, Options(), [](const rapidjson::Value&) { return Status::Ok(); });
    REQUIRE(load.ok());
    CHECK(load->corrupt);
  }
  CHECK(CountPrefix(dir.path(), "state.corrupt-") == 3);
}

}  // namespace
}  // namespace qrm::checkpoint
