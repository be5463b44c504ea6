// Crash and failure behaviour of checkpoint writes: the old file survives any
// failure or crash before the rename, and every failure reaches the caller.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint/checkpoint_file.h"
#include "testing/temp_dir.h"
#include "tests/unit/checkpoint/checkpoint_test_util.h"

namespace qrm::checkpoint {
namespace {

using testing::TempDir;
using testing::WriteFile;
using testutil::Json;
using testutil::ListDir;
using testutil::ReadN;

constexpr WriteStep kAllSteps[] = {WriteStep::kCreateTemp, WriteStep::kWriteTemp,
                                   WriteStep::kSyncTemp, WriteStep::kRename, WriteStep::kSyncDir};

// Runs a write of {"n": 2} in a child process that dies (_exit, no cleanup)
// right before `crash_at`; returns the child's exit code.
int WriteAndCrash(const std::string& path, WriteStep crash_at) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    WriteOptions options;
    options.fault_hook = [crash_at](WriteStep step) {
      if (step == crash_at) ::_exit(42);
      return Status::Ok();
    };
    rapidjson::Document data;
    data.Parse(R"({"n": 2})");
    (void)Write(path, 1, data, options);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST_CASE("a crash between temp write and rename leaves the old file intact",
          "[checkpoint][crash]") {
  TempDir dir;
  const std::string path = dir.File("state.json");
  REQUIRE(Write(path, 1, Json(R"({"n": 1})")).ok());

  REQUIRE(WriteAndCrash(path, WriteStep::kRename) == 42);
  CHECK(ReadN(path) == 1);
  // The crashed writer's fully written temp file is still there...
  REQUIRE(ListDir(dir.path()).size() == 2);
  // ...until the owner cleans up at start-up.
  auto removed = RemoveStaleTempFiles(path);
  REQUIRE(removed.ok());
  CHECK(*removed == 1);
  CHECK(ListDir(dir.path()) == std::vector<std::string>{"state.json"});
  CHECK(ReadN(path) == 1);
}

TEST_CASE("RemoveStaleTempFilesIn removes every file's crashed temps, nothing else",
          "[checkpoint][crash]") {
  TempDir dir;
  const std::string a = dir.File("a.json");
  const std::string b = dir.File("b.json");  // never completed: only its temp exists
  REQUIRE(Write(a, 1, Json(R"({"n": 1})")).ok());
  REQUIRE(WriteAndCrash(a, WriteStep::kRename) == 42);
  REQUIRE(WriteAndCrash(b, WriteStep::kSyncTemp) == 42);
  for (const char* keep : {"a.json.corrupt-1700000000", ".hidden", ".tmp-abcdef", "x.tmp-abcdef",
                           ".c.json.tmp-abcdefg"}) {
    WriteFile(dir.File(keep), "keep");
  }
  REQUIRE(ListDir(dir.path()).size() == 8);
  auto removed = RemoveStaleTempFilesIn(dir.path());
  REQUIRE(removed.ok());
  CHECK(*removed == 2);
  std::vector<std::string> names = ListDir(dir.path());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{".c.json.tmp-abcdefg", ".hidden", ".tmp-abcdef", "a.json",
                                          "a.json.corrupt-1700000000", "x.tmp-abcdef"});
  CHECK(ReadN(a) == 1);
  CHECK_FALSE(RemoveStaleTempFilesIn(dir.File("missing")).ok());
}

TEST_CASE("a crash at any step leaves either the old or the new content", "[checkpoint][crash]") {
  for (WriteStep step : kAllSteps) {
    TempDir dir;
    const std::string path = dir.File("state.json");
    REQUIRE(Write(path, 1, Json(R"({"n": 1})")).ok());
    INFO("crash before " << WriteStepName(step));
    REQUIRE(WriteAndCrash(path, step) == 42);
    // Only the directory sync comes after the rename.
    CHECK(ReadN(path) == (step == WriteStep::kSyncDir ? 2 : 1));
    REQUIRE(RemoveStaleTempFiles(path).ok());
    CHECK(ListDir(dir.path()) == std::vector<std::string>{"state.json"});
  }
}

TEST_CASE("a failure at any step is returned and leaves no temp file", "[checkpoint][faults]") {
  for (WriteStep step : kAllSteps) {
    TempDir dir;
    const std::string path = dir.File("state.json");
    REQUIRE(Write(path, 1, Json(R"({"n": 1})")).ok());
    WriteOptions options;
    options.fault_hook = [step](WriteStep s) {
      return s == step ? Status(StatusCode::kResourceExhausted, "injected") : Status::Ok();
    };
    INFO("fail at " << WriteStepName(step));
    const Status status = Write(path, 1, Json(R"({"n": 2})"), options);
    CHECK(status.code() == StatusCode::kResourceExhausted);
    CHECK(ReadN(path) == (step == WriteStep::kSyncDir ? 2 : 1));
    CHECK(ListDir(dir.path()) == std::vector<std::string>{"state.json"});
  }
}

// A scratch directory that can be made unwritable. Root ignores permission
// bits, so as root it is a real 64 KiB tmpfs (remounted read-only on demand,
// and small enough to fill); otherwise a directory chmod'ed to 0555.
class ScratchMount {
 public:
  explicit ScratchMount(const std::string& path) : path_(path) {
    REQUIRE(::mkdir(path.c_str(), 0755) == 0);
    if (::geteuid() == 0) {
      REQUIRE(::mount("tmpfs", path.c_str(), "tmpfs", 0, "size=64k") == 0);
      mounted_ = true;
    }
  }
  void MakeReadOnly() {
    if (mounted_) {
      REQUIRE(::mount("tmpfs", path_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, "size=64k") == 0);
    } else {
      REQUIRE(::chmod(path_.c_str(), 0555) == 0);
    }
  }
  ~ScratchMount() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
    ::chmod(path_.c_str(), 0755);
  }
  bool mounted() const { return mounted_; }

 private:
  std::string path_;
  bool mounted_ = false;
};

TEST_CASE("a write into a read-only directory returns an error", "[checkpoint][faults]") {
  TempDir dir;
  ScratchMount ro(dir.File("state"));
  const std::string path = dir.File("state/host.json");
  REQUIRE(Write(path, 1, Json(R"({"n": 1})")).ok());
  ro.MakeReadOnly();

  const Status status = Write(path, 1, Json(R"({"n": 2})"));
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == StatusCode::kPermissionDenied);
  CHECK_THAT(status.message(), Catch::Contains(dir.File("state")));
  CHECK(ReadN(path) == 1);
}

TEST_CASE("a full disk fails the write and keeps the old file", "[checkpoint][faults]") {
  if (::geteuid() != 0) {
    WARN("needs root to mount a small tmpfs; covered by the injected-failure test otherwise");
    return;
  }
  TempDir dir;
  ScratchMount small(dir.File("state"));  // a 64 KiB tmpfs, left writable
  REQUIRE(small.mounted());
  const std::string path = dir.File("state/host.json");
  REQUIRE(Write(path, 1, Json(R"({"n": 1})")).ok());

  rapidjson::Document big;
  big.Parse(R"({"n": 2})");
  const std::string filler(200 * 1024, 'x');
  big.AddMember("filler", rapidjson::Value(filler.c_str(), big.GetAllocator()), big.GetAllocator());
  const Status status = Write(path, 1, big);
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == StatusCode::kResourceExhausted);
  CHECK(ReadN(path) == 1);
  CHECK(ListDir(dir.File("state")) == std::vector<std::string>{"host.json"});
}

}  // namespace
}  // namespace qrm::checkpoint
