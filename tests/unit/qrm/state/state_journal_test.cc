// The host checkpoint's journal: one durable record per mutation, pod files rewritten without
// syncing, the journal winning over stale or damaged files after a crash, compaction, and a
// crash at every step leaving the old or the new state.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint/journal.h"
#include "common/metrics/metrics.h"
#include "qrm/state/state_codec.h"
#include "qrm/state/state_store.h"
#include "tests/unit/qrm/state/state_test_util.h"

namespace qrm::state {
namespace {

using checkpoint::JournalStep;
using checkpoint::WriteStep;
using testing::ReadFile;
using testing::WriteFile;
using testutil::Container;
using testutil::Exists;
using testutil::LoadSample;
using testutil::SampleState;
using testutil::StateDir;
using testutil::Store;

uint64_t JournalRecords(const std::string& path) {
  auto read = checkpoint::ReadJournal(path);
  REQUIRE(read.ok());
  return read->records.size();
}

Status PutWeb(StateStore& store, int cpus) {
  return store.PutContainer("uid-a", "web", "default", "main",
                            Container("uid-a", "default", "web", "main", cpus));
}

TEST_CASE("a mutation is one durable journal record and writes no pod file", "[state][journal]") {
  StateDir d;
  StateStore store(d.dir);
  LoadSample(store);
  std::vector<JournalStep> journal_steps;
  std::vector<WriteStep> file_steps;
  store.SetJournalFaultHookForTesting([&](JournalStep s) {
    journal_steps.push_back(s);
    return Status::Ok();
  });
  store.SetFaultHookForTesting([&](WriteStep s) {
    file_steps.push_back(s);
    return Status::Ok();
  });
  const uint64_t before = JournalRecords(store.JournalPath());
  const auto files = d.Contents();
  REQUIRE(PutWeb(store, 6).ok());
  CHECK(journal_steps == std::vector<JournalStep>{JournalStep::kAppend, JournalStep::kSync});
  CHECK(file_steps.empty());
  CHECK(d.Contents() == files);
  CHECK(JournalRecords(store.JournalPath()) == before + 1);
  // A reader (a restarted host) sees the new value at once, from the journal.
  StateStore reader(d.dir);
  REQUIRE(reader.Load().ok());
  CHECK(SamePods(reader.Snapshot(), store.Snapshot()));
}

TEST_CASE("after a crash the journal wins over stale and damaged pod files", "[state][journal]") {
  StateDir d;
  PodResources expected;
  std::string stale_a;
  {
    StateStore store(d.dir);
    LoadSample(store);
    REQUIRE(store.Compact().ok());
    stale_a = ReadFile(d.Pod("uid-a"));
    REQUIRE(PutWeb(store, 6).ok());
    REQUIRE(store.RemovePod("uid-c").ok());
    expected = store.Snapshot();
  }
  // What a machine crash can leave of unsynced files: an old version, a damaged one, a
  // removed file back.
  WriteFile(d.Pod("uid-a"), stale_a);
  std::string b = ReadFile(d.Pod("uid-b"));
  b[b.size() / 2] ^= 0x01;
  WriteFile(d.Pod("uid-b"), b);
  rapidjson::Document c;
  REQUIRE(EncodePod(*SampleState().at("uid-c"), c).ok());
  REQUIRE(checkpoint::Write(d.Pod("uid-c"), StateStore::kVersion, c).ok());

  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  // uid-b's record is older than the compaction: its damaged file cannot be restored from
  // the journal, and is reported.
  CHECK(store.recovered_from_corruption());
  expected.erase("uid-b");
  CHECK(SamePods(store.Snapshot(), expected));
  // The files say what the journal says after the next compaction.
  REQUIRE(store.Compact().ok());
  CHECK_FALSE(Exists(d.Pod("uid-c")));
  StateStore again(d.dir);
  REQUIRE(again.Load().ok());
  CHECK(SamePods(again.Snapshot(), expected));
}

ino_t Inode(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_ino;
}

TEST_CASE("a restart after a process crash rewrites no pod file; compaction still syncs them",
          "[state][journal]") {
  StateDir d;
  PodResources expected;
  {
    StateStore store(d.dir);
    LoadSample(store);
    REQUIRE(store.Compact().ok());
    REQUIRE(PutWeb(store, 6).ok());  // in the journal only, as a crash leaves it
    expected = store.Snapshot();
  }
  const ino_t a = Inode(d.Pod("uid-a")), b = Inode(d.Pod("uid-b"));
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  CHECK(SamePods(store.Snapshot(), expected));
  CHECK_FALSE(store.recovered_from_corruption());
  // Nothing is rewritten at Load (a rewrite renames a new inode over the file): the journal
  // keeps what the files lack.
  CHECK(Inode(d.Pod("uid-a")) == a);
  CHECK(Inode(d.Pod("uid-b")) == b);
  // Compaction writes uid-a's new value durably.
  std::vector<WriteStep> steps;
  store.SetFaultHookForTesting([&](WriteStep s) {
    steps.push_back(s);
    return Status::Ok();
  });
  REQUIRE(store.Compact().ok());
  CHECK(std::count(steps.begin(), steps.end(), WriteStep::kSyncTemp) == 1);
  CHECK(Inode(d.Pod("uid-a")) != a);
}

TEST_CASE("a damaged pod file the journal holds comes back from its record", "[state][journal]") {
  StateDir d;
  PodResources expected;
  {
    StateStore store(d.dir);
    REQUIRE(store.Load().ok());
    Store(store, SampleState());  // every pod's latest value is in the journal
    expected = store.Snapshot();
  }
  WriteFile(d.Pod("uid-b"), "");
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  CHECK(SamePods(store.Snapshot(), expected));
  CHECK(store.recovered_from_corruption());  // the damage is still reported
}

TEST_CASE("compaction writes the changed pods durably and starts an empty journal",
          "[state][journal]") {
  StateDir d;
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  Store(store, SampleState());
  REQUIRE(store.RemovePod("uid-c").ok());
  std::vector<WriteStep> steps;
  store.SetFaultHookForTesting([&](WriteStep s) {
    steps.push_back(s);
    return Status::Ok();
  });
  REQUIRE(store.Compact().ok());
  // Two pods written durably (every step), one removal.
  CHECK(std::count(steps.begin(), steps.end(), WriteStep::kSyncTemp) == 2);
  CHECK(std::count(steps.begin(), steps.end(), WriteStep::kSyncDir) == 2);
  CHECK(JournalRecords(store.JournalPath()) == 0);
  steps.clear();
  REQUIRE(store.Compact().ok());  // nothing changed since: nothing written
  CHECK(steps.empty());
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK(SamePods(reloaded.Snapshot(), store.Snapshot()));
  CHECK(reloaded.GetPod("uid-c") == nullptr);
}

TEST_CASE("the journal is compacted once it holds kCompactAfter records", "[state][journal]") {
  StateDir d;
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  for (uint64_t i = 0; i < StateStore::kCompactAfter + 10; ++i) {
    REQUIRE(PutWeb(store, static_cast<int>(i % 8) + 1).ok());
  }
  CHECK(JournalRecords(store.JournalPath()) == 10);
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK(SamePods(reloaded.Snapshot(), store.Snapshot()));
}

TEST_CASE("a damaged journal is moved aside and reported; a torn last record is dropped",
          "[state][journal]") {
  StateDir d;
  std::string journal;
  {
    StateStore store(d.dir);
    LoadSample(store);
    REQUIRE(store.Compact().ok());
    REQUIRE(PutWeb(store, 6).ok());  // record 1
    REQUIRE(PutWeb(store, 7).ok());  // record 2
    journal = store.JournalPath();
  }
  const std::string whole = ReadFile(journal);
  SECTION("torn") {
    WriteFile(journal, whole.substr(0, whole.size() - 5));
    StateStore store(d.dir);
    REQUIRE(store.Load().ok());
    CHECK_FALSE(store.recovered_from_corruption());
    // Record 1 applies (6 CPUs), record 2 was torn: the sample's container with 6.
    CHECK(JournalRecords(journal) == 1);  // cut off, appends go on after record 1
    StateDir other;
    StateStore expected(other.dir);
    LoadSample(expected);
    REQUIRE(PutWeb(expected, 6).ok());
    CHECK(SamePods(store.Snapshot(), expected.Snapshot()));
  }
  SECTION("damaged") {
    auto& counter = metrics::Default().GetCounter("qrm_checkpoint_corrupt_total", "",
                                                  {{"file", "host-journal"}});
    const double counted = counter.Value();
    std::string damaged = whole;
    damaged[whole.find('\n') + 10] ^= 0x01;  // inside record 1, with record 2 after it
    WriteFile(journal, damaged);
    StateStore store(d.dir);
    REQUIRE(store.Load().ok());
    CHECK(store.recovered_from_corruption());
    CHECK_THAT(store.recovery_message(), Catch::Contains(journal + ".corrupt-"));
    CHECK(counter.Value() == counted + 1);
    CHECK(JournalRecords(journal) == 0);
    CHECK(store.Snapshot().size() == 3);  // the files' pods, as of the compaction
  }
}

// A child loads the store, runs `mutate` and dies (no cleanup) right before `step`.
void CrashDuring(const StateDir& d, const std::function<Status(StateStore&)>& mutate,
                 std::optional<JournalStep> journal_step, std::optional<WriteStep> file_step) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    StateStore store(d.dir);
    if (!store.Load().ok()) ::_exit(3);
    store.SetJournalFaultHookForTesting([journal_step](JournalStep s) {
      if (journal_step && s == *journal_step) ::_exit(42);
      return Status::Ok();
    });
    store.SetFaultHookForTesting([file_step](WriteStep s) {
      if (file_step && s == *file_step) ::_exit(42);
      return Status::Ok();
    });
    (void)mutate(store);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 42);
}

TEST_CASE("a crash at any step of a mutation or a compaction leaves the old or the new state",
          "[state][journal][faults]") {
  const auto put = [](StateStore& s) { return PutWeb(s, 6); };
  const auto remove = [](StateStore& s) { return s.RemovePod("uid-b"); };
  const auto put_then_compact = [](StateStore& s) {
    QRM_RETURN_IF_ERROR(PutWeb(s, 6));
    return s.Compact();
  };
  const auto remove_then_compact = [](StateStore& s) {
    QRM_RETURN_IF_ERROR(s.RemovePod("uid-b"));
    return s.Compact();
  };
  struct Case {
    const char* name;
    std::function<Status(StateStore&)> mutate;
    std::optional<JournalStep> journal_step;
    std::optional<WriteStep> file_step;
    bool applied;  // whether the change survives (the record reached the file)
  };
  const std::vector<Case> cases = {
      {"put, before the record", put, JournalStep::kAppend, {}, false},
      {"put, before its sync", put, JournalStep::kSync, {}, true},
      {"remove, before the record", remove, JournalStep::kAppend, {}, false},
      {"remove, before its sync", remove, JournalStep::kSync, {}, true},
      {"compaction, before a file's temp", put_then_compact, {}, WriteStep::kCreateTemp, true},
      {"compaction, before a file's sync", put_then_compact, {}, WriteStep::kSyncTemp, true},
      {"compaction, before a file's rename", put_then_compact, {}, WriteStep::kRename, true},
      {"compaction, before the directory's sync", put_then_compact, {}, WriteStep::kSyncDir, true},
      {"compaction, before a removed pod's unlink",
       remove_then_compact,
       {},
       WriteStep::kRename,
       true},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    StateDir d;
    PodResources before, after;
    {
      StateStore store(d.dir);
      LoadSample(store);
      before = store.Snapshot();
      StateDir scratch;
      StateStore preview(scratch.dir);
      LoadSample(preview);
      REQUIRE(c.mutate(preview).ok());
      after = preview.Snapshot();
    }
    CrashDuring(d, c.mutate, c.journal_step, c.file_step);
    StateStore store(d.dir);
    REQUIRE(store.Load().ok());
    CHECK(SamePods(store.Snapshot(), c.applied ? after : before));
  }
}

}  // namespace
}  // namespace qrm::state
