// The journal: records come back in order; a torn last append is dropped and cut off; any
// other damage is kDataLoss naming the line; a failed append leaves nothing behind; a crash at
// every step of an append leaves the journal readable.
#include "checkpoint/journal.h"

#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint/checksum.h"
#include "testing/temp_dir.h"
#include "tests/unit/checkpoint/checkpoint_test_util.h"

namespace qrm::checkpoint {
namespace {

using Catch::Contains;
using testing::TempDir;
using testutil::Json;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A journal of generation 7 holding {"n": 1} .. {"n": count}.
std::string MakeJournal(const TempDir& dir, int count) {
  const std::string path = dir.File("state.journal");
  auto writer = JournalWriter::Start(path, 7);
  REQUIRE(writer.ok());
  for (int n = 1; n <= count; ++n) {
    REQUIRE((*writer)->Append(Json(("{\"n\": " + std::to_string(n) + "}").c_str())).ok());
  }
  return path;
}

std::vector<int64_t> Ns(const JournalContents& contents) {
  std::vector<int64_t> ns;
  for (const auto& r : contents.records) ns.push_back(r["n"].GetInt64());
  return ns;
}

TEST_CASE("journal records come back in order with their generation", "[checkpoint][journal]") {
  TempDir dir;
  const std::string path = MakeJournal(dir, 3);
  auto read = ReadJournal(path);
  REQUIRE(read.ok());
  CHECK(read->generation == 7);
  CHECK(Ns(*read) == std::vector<int64_t>{1, 2, 3});
  CHECK_FALSE(read->torn_tail);
  CHECK(read->valid_bytes == ReadAll(path).size());

  // Each line is "<checksum> <canonical record>", verifiable without qrm.
  const std::string text = ReadAll(path);
  const std::string second_line =
      text.substr(text.find('\n') + 1, text.find('\n', text.find('\n') + 1) - text.find('\n') - 1);
  CHECK(second_line == FormatChecksum(R"({"n":1})") + R"( {"n":1})");
}

TEST_CASE("a torn last append is dropped, and Continue cuts it off", "[checkpoint][journal]") {
  TempDir dir;
  const std::string path = MakeJournal(dir, 2);
  const std::string intact = ReadAll(path);
  const std::string third = *FormatJournalLine(Json(R"({"n": 3})"));
  // Every proper prefix of a third record, and NUL bytes a power loss can leave.
  std::vector<std::string> tails;
  for (size_t cut = 1; cut < third.size(); ++cut) tails.push_back(third.substr(0, cut));
  tails.push_back(std::string(40, '\0'));
  tails.push_back(third.substr(0, 10) + std::string(20, '\0'));
  for (const std::string& tail : tails) {
    WriteAll(path, intact + tail);
    auto read = ReadJournal(path);
    INFO("tail of " << tail.size() << " bytes");
    REQUIRE(read.ok());
    CHECK(read->torn_tail);
    CHECK(Ns(*read) == std::vector<int64_t>{1, 2});
    CHECK(read->valid_bytes == intact.size());
  }
  auto read = ReadJournal(path);
  REQUIRE(read.ok());
  auto writer = JournalWriter::Continue(path, *read);
  REQUIRE(writer.ok());
  REQUIRE((*writer)->Append(Json(R"({"n": 4})")).ok());
  auto again = ReadJournal(path);
  REQUIRE(again.ok());
  CHECK_FALSE(again->torn_tail);
  CHECK(Ns(*again) == std::vector<int64_t>{1, 2, 4});
}

TEST_CASE("damage before the last line is kDataLoss naming the line", "[checkpoint][journal]") {
  TempDir dir;
  const std::string path = MakeJournal(dir, 3);
  const std::string intact = ReadAll(path);
  const size_t header_end = intact.find('\n') + 1;
  const size_t first_end = intact.find('\n', header_end) + 1;
  // Flip each byte of the first record (the last one may be a torn append, so it is not
  // damage; the header is checked below).
  for (size_t at = header_end; at + 1 < first_end; ++at) {
    std::string bad = intact;
    bad[at] = static_cast<char>(bad[at] ^ 0x01);
    auto read = ParseJournal(bad, "j");
    INFO("byte " << at);
    REQUIRE_FALSE(read.ok());
    CHECK(read.status().code() == StatusCode::kDataLoss);
    CHECK_THAT(read.status().message(), Contains("journal j: corrupt: line 2"));
  }
  for (size_t at = 0; at + 1 < header_end; ++at) {
    std::string bad = intact;
    bad[at] = static_cast<char>(bad[at] ^ 0x01);
    auto read = ParseJournal(bad, "j");
    INFO("header byte " << at);
    REQUIRE_FALSE(read.ok());
    CHECK(read.status().code() == StatusCode::kDataLoss);
  }
  CHECK(ParseJournal("", "j").status().code() == StatusCode::kDataLoss);
  CHECK(ReadJournal(dir.File("missing")).status().code() == StatusCode::kNotFound);
}

TEST_CASE("a failed append leaves no record behind", "[checkpoint][journal]") {
  for (JournalStep failing : {JournalStep::kAppend, JournalStep::kSync}) {
    TempDir dir;
    const std::string path = dir.File("state.journal");
    JournalOptions options;
    bool fail = false;
    options.fault_hook = [&](JournalStep step) {
      if (fail && step == failing) return ResourceExhaustedError("disk full");
      return Status::Ok();
    };
    auto writer = JournalWriter::Start(path, 1, options);
    REQUIRE(writer.ok());
    REQUIRE((*writer)->Append(Json(R"({"n": 1})")).ok());
    fail = true;
    CHECK((*writer)->Append(Json(R"({"n": 2})")).code() == StatusCode::kResourceExhausted);
    fail = false;
    CHECK_FALSE((*writer)->broken());
    REQUIRE((*writer)->Append(Json(R"({"n": 3})")).ok());
    auto read = ReadJournal(path);
    REQUIRE(read.ok());
    CHECK(Ns(*read) == std::vector<int64_t>{1, 3});
    CHECK((*writer)->records() == 2);
  }
}

TEST_CASE("without sync an append is written but not synced, and AppendDurably syncs",
          "[checkpoint][journal]") {
  TempDir dir;
  std::vector<JournalStep> steps;
  JournalOptions options;
  options.sync = false;
  options.fault_hook = [&steps](JournalStep step) {
    steps.push_back(step);
    return Status::Ok();
  };
  const std::string path = dir.File("state.journal");
  auto writer = JournalWriter::Start(path, 1, options);
  REQUIRE(writer.ok());
  REQUIRE((*writer)->Append(Json(R"({"n": 1})")).ok());
  CHECK(steps == std::vector<JournalStep>{JournalStep::kAppend});
  REQUIRE((*writer)->AppendDurably(Json(R"({"n": 2})")).ok());
  CHECK(steps ==
        std::vector<JournalStep>{JournalStep::kAppend, JournalStep::kAppend, JournalStep::kSync});
  // In the file either way: a crash of the process loses neither.
  auto read = ReadJournal(path);
  REQUIRE(read.ok());
  CHECK(Ns(*read) == std::vector<int64_t>{1, 2});
  // A failed unsynced append is still taken back.
  options.fault_hook = [](JournalStep) { return ResourceExhaustedError("disk full"); };
  auto failing = JournalWriter::Continue(path, *read, options);
  REQUIRE(failing.ok());
  CHECK_FALSE((*failing)->Append(Json(R"({"n": 3})")).ok());
  CHECK(ReadAll(path).size() == read->valid_bytes);
}

TEST_CASE("an append to a removed journal fails instead of vanishing", "[checkpoint][journal]") {
  TempDir dir;
  const std::string path = dir.File("state.journal");
  auto writer = JournalWriter::Start(path, 1);
  REQUIRE(writer.ok());
  REQUIRE((*writer)->Append(Json(R"({"n": 1})")).ok());
  REQUIRE(::unlink(path.c_str()) == 0);
  const Status s = (*writer)->Append(Json(R"({"n": 2})"));
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(s.message(), Contains("removed"));
  CHECK((*writer)->broken());
}

TEST_CASE("floating-point records are refused before anything is written",
          "[checkpoint][journal]") {
  TempDir dir;
  const std::string path = MakeJournal(dir, 1);
  const std::string before = ReadAll(path);
  auto read = ReadJournal(path);
  REQUIRE(read.ok());
  auto writer = JournalWriter::Continue(path, *read);
  REQUIRE(writer.ok());
  CHECK((*writer)->Append(Json(R"({"n": 1.5})")).code() == StatusCode::kInvalidArgument);
  CHECK(ReadAll(path) == before);
}

// A child appends {"n": 2} and dies right before `crash_at`.
void AppendAndCrash(const std::string& path, JournalStep crash_at) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto read = ReadJournal(path);
    if (!read.ok()) ::_exit(3);
    JournalOptions options;
    options.fault_hook = [crash_at](JournalStep step) {
      if (step == crash_at) ::_exit(42);
      return Status::Ok();
    };
    auto writer = JournalWriter::Continue(path, *read, options);
    if (!writer.ok()) ::_exit(4);
    (void)(*writer)->Append(testutil::Json(R"({"n": 2})"));
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 42);
}

TEST_CASE("a crash at any step of an append leaves a readable journal",
          "[checkpoint][journal][crash]") {
  // Before the write: the record is not there. Before the sync: the process died after
  // write(), so the page cache holds the record (a power loss could still drop it).
  const std::pair<JournalStep, std::vector<int64_t>> cases[] = {{JournalStep::kAppend, {1}},
                                                                {JournalStep::kSync, {1, 2}}};
  for (const auto& [step, expected] : cases) {
    TempDir dir;
    const std::string path = MakeJournal(dir, 1);
    AppendAndCrash(path, step);
    auto read = ReadJournal(path);
    REQUIRE(read.ok());
    CHECK(Ns(*read) == expected);
  }
}

}  // namespace
}  // namespace qrm::checkpoint
