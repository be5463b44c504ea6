// SharedJournal: every Append returns durable, concurrent appends share fdatasyncs, and a
// failed sync fails (and takes back) every record it would have covered.
#include "checkpoint/shared_journal.h"

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "testing/temp_dir.h"
#include "tests/unit/checkpoint/checkpoint_test_util.h"

namespace qrm::checkpoint {
namespace {

using testing::TempDir;
using testutil::Json;

std::set<int64_t> Ns(const std::string& path) {
  auto read = ReadJournal(path);
  REQUIRE(read.ok());
  std::set<int64_t> ns;
  for (const auto& r : read->records) ns.insert(r["n"].GetInt64());
  return ns;
}

rapidjson::Document Record(int n) {
  return Json(("{\"n\": " + std::to_string(n) + "}").c_str());
}

TEST_CASE("a lone writer pays one sync per record", "[checkpoint][journal]") {
  TempDir dir;
  std::atomic<int> syncs{0};
  JournalOptions options;
  options.sync = false;
  options.fault_hook = [&syncs](JournalStep step) {
    if (step == JournalStep::kSync) ++syncs;
    return Status::Ok();
  };
  auto writer = JournalWriter::Start(dir.File("j"), 1, options);
  REQUIRE(writer.ok());
  SharedJournal journal(std::move(*writer));
  for (int n = 1; n <= 3; ++n) REQUIRE(journal.Append(Record(n)).ok());
  CHECK(syncs == 3);
  CHECK(journal.records() == 3);
  CHECK(Ns(dir.File("j")) == std::set<int64_t>{1, 2, 3});
}

TEST_CASE("writers that queue behind a sync share the next one", "[checkpoint][journal]") {
  TempDir dir;
  std::atomic<int> syncs{0};
  std::atomic<bool> hold{true};
  JournalOptions options;
  options.sync = false;
  options.fault_hook = [&](JournalStep step) {
    if (step != JournalStep::kSync) return Status::Ok();
    // The first sync waits until every other writer has written its record and queued.
    if (syncs++ == 0) {
      while (hold) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Status::Ok();
  };
  auto writer = JournalWriter::Start(dir.File("j"), 1, options);
  REQUIRE(writer.ok());
  SharedJournal journal(std::move(*writer));
  constexpr int kWriters = 8;
  std::vector<Status> results(kWriters);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { results[0] = journal.Append(Record(0)); });
  while (syncs == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (int i = 1; i < kWriters; ++i) {
    threads.emplace_back([&, i] { results[i] = journal.Append(Record(i)); });
  }
  while (journal.records() < kWriters) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  hold = false;
  for (auto& t : threads) t.join();
  for (const Status& s : results) CHECK(s.ok());
  // The first record's sync, then one for the seven written while it ran.
  CHECK(syncs == 2);
  CHECK(Ns(dir.File("j")).size() == kWriters);
}

TEST_CASE("a failed sync fails every record it covered and takes them back",
          "[checkpoint][journal]") {
  TempDir dir;
  std::atomic<bool> fail{false};
  JournalOptions options;
  options.sync = false;
  options.fault_hook = [&fail](JournalStep step) {
    if (step == JournalStep::kSync && fail) return ResourceExhaustedError("injected: disk full");
    return Status::Ok();
  };
  auto writer = JournalWriter::Start(dir.File("j"), 1, options);
  REQUIRE(writer.ok());
  SharedJournal journal(std::move(*writer));
  REQUIRE(journal.Append(Record(1)).ok());
  fail = true;
  const Status failed = journal.Append(Record(2));
  CHECK(failed.code() == StatusCode::kResourceExhausted);
  CHECK_THAT(failed.message(), Catch::Contains("injected"));
  CHECK(Ns(dir.File("j")) == std::set<int64_t>{1});  // nothing of the refused change
  fail = false;
  REQUIRE(journal.Append(Record(3)).ok());
  CHECK(Ns(dir.File("j")) == std::set<int64_t>{1, 3});
  CHECK_FALSE(journal.broken());

  // Replaced (compaction): appends go to the new journal.
  auto next = JournalWriter::Start(dir.File("k"), 2, options);
  REQUIRE(next.ok());
  journal.Replace(std::move(*next));
  REQUIRE(journal.Append(Record(4)).ok());
  CHECK(journal.generation() == 2);
  CHECK(Ns(dir.File("k")) == std::set<int64_t>{4});
}

}  // namespace
}  // namespace qrm::checkpoint
