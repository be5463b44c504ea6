#include "checkpoint/checkpoint_file.h"

#include <string>

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint/base64.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "tests/unit/checkpoint/checkpoint_test_util.h"

namespace qrm::checkpoint {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;
using testutil::Json;
using testutil::ListDir;

constexpr const char* kSample = R"({
  "pod_entries": {"054a696f": {"container0": {"cpu": {"allocation_result": "0-37,40-77",
                                                      "allocated_milli": 76000}}}},
  "machine_state": {"0": {"reserved": "0-1"}, "1": {"reserved": "40-41"}},
  "note": "ünïcödé \"quoted\" \\ tab\t",
  "flags": [true, false, null],
  "big": 18446744073709551615,
  "neg": -42
})";

TEST_CASE("a written checkpoint reads back identical", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  auto data = Json(kSample);
  REQUIRE(Write(path, 3, data).ok());

  ReadOptions options;
  options.max_version = 3;
  auto cp = Read(path, options);
  REQUIRE(cp.ok());
  CHECK(cp->version == 3);
  CHECK(cp->data == data);
  CHECK(cp->checksum.starts_with("fnv1a64:"));
  // The file is exactly the documented envelope.
  const std::string content = ReadFile(path);
  CHECK(content.starts_with(R"({"version":3,"checksum":"fnv1a64:)"));
  CHECK(content.ends_with("}\n"));
  // Files hold allocation state: private to the owner by default.
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(ListDir(dir.path()).size() == 1);
}

TEST_CASE("rewriting replaces the content", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  REQUIRE(Write(path, 1, Json(R"({"n": 1})")).ok());
  REQUIRE(Write(path, 1, Json(R"({"n": 2})")).ok());
  CHECK(testutil::ReadN(path) == 2);
}

TEST_CASE("the checksum is verified by an independent Python implementation", "[checkpoint]") {
  const std::string python = testing::FindExecutable("python3");
  REQUIRE_FALSE(python.empty());  // scripts/install-deps installs python3
  TempDir dir;
  const std::string path = dir.File("state.json");
  REQUIRE(Write(path, 1, Json(kSample)).ok());
  auto result = testing::RunProcess({python, QRM_VERIFY_SCRIPT, path});
  INFO(result.output);
  CHECK(result.exit_code == 0);
  CHECK(result.output == Read(path)->checksum + "\n");
}

TEST_CASE("a missing checkpoint is reported as missing", "[checkpoint]") {
  TempDir dir;
  auto cp = Read(dir.File("absent.json"));
  REQUIRE_FALSE(cp.ok());
  CHECK(IsMissing(cp.status()));
  CHECK_THAT(cp.status().message(), Catch::Contains("absent.json"));
  CHECK_THAT(cp.status().message(), Catch::Contains("does not exist"));
}

TEST_CASE("a truncated checkpoint is detected as corrupt at every length", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  REQUIRE(Write(path, 1, Json(kSample)).ok());
  const std::string content = ReadFile(path);
  ReadOptions keep;
  keep.quarantine_corrupt = false;
  // Dropping only the final newline loses nothing; every shorter prefix is corrupt.
  for (size_t len = 0; len + 1 < content.size(); ++len) {
    WriteFile(path, content.substr(0, len));
    auto cp = Read(path, keep);
    INFO("length " << len);
    REQUIRE_FALSE(cp.ok());
    CHECK(IsCorrupt(cp.status()));
  }
  WriteFile(path, content.substr(0, content.size() / 2));
  auto cp = Read(path, keep);
  CHECK_THAT(cp.status().message(), Catch::Contains("truncated"));
  WriteFile(path, "");
  CHECK_THAT(Read(path, keep).status().message(), Catch::Contains("empty file"));
}

TEST_CASE("every single-bit flip anywhere in the file is detected", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  REQUIRE(Write(path, 1, Json(R"({"cpus": "0-3,8", "pods": {"p1": {"n": 7}}, "s": "ab"})")).ok());
  const std::string content = ReadFile(path);
  ReadOptions keep;
  keep.quarantine_corrupt = false;
  int corrupt = 0, unsupported = 0;
  for (size_t i = 0; i < content.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = content;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      WriteFile(path, flipped);
      auto cp = Read(path, keep);
      INFO("byte " << i << " bit " << bit);
      REQUIRE_FALSE(cp.ok());
      // Flips of the version digit yield another (unsupported) version; the rest are corrupt.
      if (IsUnsupportedVersion(cp.status())) {
        ++unsupported;
      } else {
        REQUIRE(IsCorrupt(cp.status()));
        ++corrupt;
      }
    }
  }
  CHECK(unsupported <= 8);
  CHECK(corrupt + unsupported == static_cast<int>(content.size() * 8));
}

TEST_CASE("a flipped byte in data is a checksum mismatch", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  REQUIRE(Write(path, 1, Json(R"({"cpus": "0-3"})")).ok());
  std::string content = ReadFile(path);
  const size_t at = content.find("0-3");
  content[at] = '1';
  WriteFile(path, content);
  auto cp = Read(path);
  REQUIRE_FALSE(cp.ok());
  CHECK(IsCorrupt(cp.status()));
  CHECK_THAT(cp.status().message(), Catch::Contains("checksum mismatch"));
}

TEST_CASE("a wrong version is reported as unsupported and left in place", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  REQUIRE(Write(path, 7, Json(R"({"n": 1})")).ok());
  ReadOptions options;
  options.min_version = 1;
  options.max_version = 2;
  auto cp = Read(path, options);
  REQUIRE_FALSE(cp.ok());
  CHECK(IsUnsupportedVersion(cp.status()));
  CHECK_THAT(cp.status().message(), Catch::Contains("unsupported version 7"));
  CHECK_THAT(cp.status().message(), Catch::Contains("1 to 2"));
  CHECK(ListDir(dir.path()) == std::vector<std::string>{"state.json"});
}

TEST_CASE("wrong envelope shapes are corrupt with a reason", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  ReadOptions keep;
  keep.quarantine_corrupt = false;
  const std::pair<const char*, const char*> cases[] = {
      {"[]", "not a JSON object"},
      {R"({"version":1,"checksum":"fnv1a64:0"})", "missing member \"data\""},
      {R"({"version":"1","checksum":"x","data":{}})", "\"version\" is not an unsigned integer"},
      {R"({"version":-1,"checksum":"x","data":{}})", "\"version\" is not an unsigned integer"},
      {R"({"version":1,"checksum":"x","data":[]})", "\"data\" is not an object"},
      {R"({"version":1,"checksum":"crc32:00","data":{}})", "does not use fnv1a64"},
      {R"({"version":1,"checksum":"fnv1a64:0","data":{},"extra":1})", "unexpected members"},
      {R"({"version":1,"checksum":"fnv1a64:0","data":{"x":1.5}})", "floating-point"},
      {"{\"version\":1,\"checksum\":\"fnv1a64:0\",\"data\":{\"x\":\"\xff\"}}", "invalid JSON"},
  };
  for (const auto& [text, reason] : cases) {
    INFO(text);
    WriteFile(path, text);
    auto cp = Read(path, keep);
    REQUIRE_FALSE(cp.ok());
    CHECK(IsCorrupt(cp.status()));
    CHECK_THAT(cp.status().message(), Catch::Contains(reason));
  }
}

TEST_CASE("a corrupt checkpoint is moved aside, never over an earlier one", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  const long now = static_cast<long>(std::time(nullptr));
  // Earlier quarantined copies for this second and the next must survive.
  WriteFile(path + ".corrupt-" + std::to_string(now), "earlier-0");
  WriteFile(path + ".corrupt-" + std::to_string(now + 1), "earlier-1");
  WriteFile(path, "{\"version\":1,");

  auto cp = Read(path);
  REQUIRE_FALSE(cp.ok());
  CHECK(IsCorrupt(cp.status()));
  CHECK_THAT(cp.status().message(), Catch::Contains("moved aside to " + path + ".corrupt-"));
  CHECK(::access(path.c_str(), F_OK) != 0);
  CHECK(ReadFile(path + ".corrupt-" + std::to_string(now)) == "earlier-0");
  CHECK(ReadFile(path + ".corrupt-" + std::to_string(now + 1)) == "earlier-1");
  CHECK(ListDir(dir.path()).size() == 3);
  // The quarantined copy holds the original bytes for inspection.
  const std::string moved =
      cp.status().message().substr(cp.status().message().find(path + ".corrupt-"));
  CHECK(ReadFile(moved) == "{\"version\":1,");
  // The owner can now start afresh.
  REQUIRE(Write(path, 1, Json(R"({"n": 1})")).ok());
  CHECK(testutil::ReadN(path) == 1);
}

TEST_CASE("binary payloads are stored base64-encoded and round-trip", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  std::string blob;
  for (int i = 255; i >= 0; --i) blob += static_cast<char>(i);  // every byte, >= 0x80 first
  rapidjson::Document data;
  data.SetObject();
  const std::string encoded = Base64Encode(blob);
  data.AddMember("resource_hints_pb", rapidjson::Value(encoded.c_str(), data.GetAllocator()),
                 data.GetAllocator());
  REQUIRE(Write(path, 1, data).ok());
  // The file itself stays 7-bit text.
  for (char c : ReadFile(path)) REQUIRE(static_cast<unsigned char>(c) < 0x80);
  auto cp = Read(path);
  REQUIRE(cp.ok());
  auto decoded = Base64Decode(cp->data["resource_hints_pb"].GetString());
  REQUIRE(decoded.ok());
  CHECK(*decoded == blob);
}

TEST_CASE("data that cannot be stored is refused before touching the file", "[checkpoint]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  REQUIRE(Write(path, 1, Json(R"({"n": 1})")).ok());
  auto not_object = Write(path, 1, Json("[1]"));
  CHECK(not_object.code() == StatusCode::kInvalidArgument);
  auto with_float = Write(path, 1, Json(R"({"quantity": 0.5})"));
  CHECK(with_float.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(with_float.message(), Catch::Contains("data.quantity"));
  CHECK(testutil::ReadN(path) == 1);
  CHECK(ListDir(dir.path()).size() == 1);
}

}  // namespace
}  // namespace qrm::checkpoint
