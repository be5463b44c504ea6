// PodLedger: what a plugin holds survives restarts, compaction and crashes at every step of a
// write; damaged files are set aside (never half-applied); another machine's ledger stops the
// plugin unless reset; older versions are upgraded.
#include "plugins/sdk/pod_ledger.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "testing/temp_dir.h"

namespace qrm::sdk {
namespace {

using Catch::Contains;
using testing::TempDir;

struct Slots {
  int64_t count = 0;
  std::string nodes;

  void Encode(EntryWriter& w) const {
    w.Set("count", count);
    w.Set("nodes", nodes);
  }
  static StatusOr<Slots> Decode(const EntryReader& r) {
    QRM_ASSIGN_OR_RETURN(const int64_t count, r.Int("count"));
    QRM_ASSIGN_OR_RETURN(std::string nodes, r.StringOr("nodes", ""));
    return Slots{count, std::move(nodes)};
  }
  friend bool operator==(const Slots&, const Slots&) = default;
};

using Ledger = PodLedger<Slots>;

LedgerOptions Options(const TempDir& dir) {
  LedgerOptions o;
  o.path = dir.File("state/ledger");
  o.component = "test-plugin";
  o.version = 2;
  o.compact_after = 4;
  return o;
}

Ledger::Opened OpenOk(const LedgerOptions& options, const Ledger::CheckFn& check = {}) {
  auto opened = Ledger::Open(options, check);
  INFO(opened.status().ToString());
  REQUIRE(opened.ok());
  return std::move(*opened);
}

bool Exists(const std::string& path) {
  return std::filesystem::exists(path);
}

int CountAside(const TempDir& dir, const std::string& reason) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.File("state"))) {
    if (e.path().filename().string().find("." + reason + "-") != std::string::npos) ++n;
  }
  return n;
}

TEST_CASE("puts, removals and settings survive a restart", "[sdk][ledger]") {
  TempDir dir;
  {
    auto opened = OpenOk(Options(dir));
    CHECK_FALSE(opened.load.restored);
    CHECK(opened.contents.pods.empty());
    REQUIRE(opened.ledger->Put("uid-a", "main", {2, "0"}).ok());
    REQUIRE(opened.ledger->Put("uid-a", "side", {1, "1"}).ok());
    REQUIRE(opened.ledger->Put("uid-b", "main", {3, ""}).ok());
    REQUIRE(opened.ledger->Put("uid-a", "main", {4, "0-1"}).ok());  // replaces
    REQUIRE(opened.ledger->RemovePod("uid-b").ok());
    REQUIRE(opened.ledger->Set("pool", "6").ok());
    CHECK(opened.ledger->store().containers() == 2);
  }
  auto opened = OpenOk(Options(dir));
  CHECK(opened.load.restored);
  REQUIRE(opened.contents.pods.size() == 1);
  CHECK(opened.contents.pods.at("uid-a").at("main") == Slots{4, "0-1"});
  CHECK(opened.contents.pods.at("uid-a").at("side") == Slots{1, "1"});
  CHECK(opened.contents.settings.at("pool") == "6");
}

TEST_CASE("without journal sync only settings wait for fdatasync", "[sdk][ledger]") {
  TempDir dir;
  int syncs = 0;
  LedgerOptions options = Options(dir);
  options.compact_after = 1000;  // no snapshot in between
  options.journal_write.sync = false;
  options.journal_write.fault_hook = [&syncs](checkpoint::JournalStep s) {
    if (s == checkpoint::JournalStep::kSync) ++syncs;
    return Status::Ok();
  };
  {
    auto opened = OpenOk(options);
    REQUIRE(opened.ledger->Put("uid-a", "main", {2, "0"}).ok());
    REQUIRE(opened.ledger->RemovePod("uid-a").ok());
    REQUIRE(opened.ledger->Put("uid-b", "main", {1, "1"}).ok());
    CHECK(syncs == 0);
    // A setting is no container's: the host could not give it back.
    REQUIRE(opened.ledger->Set("pool", "6").ok());
    CHECK(syncs == 1);
  }
  // Everything written is read back (the process stopping loses nothing).
  auto opened = OpenOk(Options(dir));
  REQUIRE(opened.contents.pods.size() == 1);
  CHECK(opened.contents.pods.at("uid-b").at("main") == Slots{1, "1"});
  CHECK(opened.contents.settings.at("pool") == "6");
}

TEST_CASE("a ledger without a path keeps nothing on disk and accepts every change",
          "[sdk][ledger]") {
  TempDir dir;
  LedgerOptions options = Options(dir);
  options.path.clear();
  // A check that would refuse anything: it is never asked, since nothing is read.
  auto opened = OpenOk(options, [](const Ledger::Contents&) { return DataLossError("read"); });
  CHECK_FALSE(opened.load.restored);
  CHECK(opened.contents.pods.empty());
  CHECK(opened.ledger->Put("uid-a", "main", {2, "0"}).ok());
  CHECK(opened.ledger->Set("pool", "6").ok());
  CHECK(opened.ledger->RemovePod("uid-a").ok());
  CHECK(opened.ledger->WriteSnapshot().ok());
  CHECK_FALSE(Exists(dir.File("state")));
}

TEST_CASE("compaction bounds the journal by what is held", "[sdk][ledger]") {
  TempDir dir;
  auto opened = OpenOk(Options(dir));
  const uint64_t first = opened.ledger->store().generation();
  for (int i = 0; i < 50; ++i) {
    REQUIRE(opened.ledger->Put("uid-" + std::to_string(i % 3), "c", {i, ""}).ok());
    // compact_after 4, 3 containers: never more than 4 records in the journal.
    CHECK(opened.ledger->store().journal_records() < 4);
  }
  CHECK(opened.ledger->store().generation() > first + 10);
  auto reopened = OpenOk(Options(dir));
  REQUIRE(reopened.contents.pods.size() == 3);
  CHECK(reopened.contents.pods.at("uid-1").at("c").count == 49);
  CHECK(reopened.contents.pods.at("uid-0").at("c").count == 48);
}

// A child opens the ledger, puts uid-new twice (count 7, then 8), and dies where `arm`'s
// hooks say: in the first put's journal append, or in the compaction the second put triggers
// (two records, two containers).
int PutAndCrash(const LedgerOptions& base, std::function<void(LedgerOptions&)> arm) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    LedgerOptions options = base;
    auto opened = Ledger::Open(options);
    if (!opened.ok()) ::_exit(3);
    arm(options);
    // Open again with the hooks armed (Open itself compacts, so arm only now).
    auto armed = Ledger::Open(options);
    if (!armed.ok()) ::_exit(4);
    (void)armed->ledger->Put("uid-new", "c", {7, ""});
    (void)armed->ledger->Put("uid-new", "c", {8, ""});
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST_CASE("a crash at any step of a change leaves the old or the new ledger",
          "[sdk][ledger][crash]") {
  SECTION("journal append") {
    for (auto step : {checkpoint::JournalStep::kAppend, checkpoint::JournalStep::kSync}) {
      TempDir dir;
      auto options = Options(dir);
      options.compact_after = 1000;
      { REQUIRE(OpenOk(options).ledger->Put("uid-old", "c", {1, ""}).ok()); }
      const int code = PutAndCrash(options, [step](LedgerOptions& o) {
        o.journal_write.fault_hook = [step](checkpoint::JournalStep s) {
          if (s == step) ::_exit(42);
          return Status::Ok();
        };
      });
      REQUIRE(code == 42);
      auto opened = OpenOk(options);
      CHECK(opened.load.restored);
      CHECK(opened.contents.pods.count("uid-old") == 1);
      // Dead before the write: not there. Dead before the sync: written, so there.
      CHECK(opened.contents.pods.count("uid-new") ==
            (step == checkpoint::JournalStep::kSync ? 1u : 0u));
    }
  }
  SECTION("compaction") {
    using checkpoint::WriteStep;
    for (auto step : {WriteStep::kCreateTemp, WriteStep::kWriteTemp, WriteStep::kSyncTemp,
                      WriteStep::kRename, WriteStep::kSyncDir}) {
      TempDir dir;
      auto options = Options(dir);
      options.compact_after = 1;  // compaction as soon as records >= containers
      { REQUIRE(OpenOk(options).ledger->Put("uid-old", "c", {1, ""}).ok()); }
      const int code = PutAndCrash(options, [step](LedgerOptions& o) {
        bool opened = false;
        o.snapshot_write.fault_hook = [step, opened](WriteStep s) mutable {
          // The first snapshot is Open's own; crash in the one after the put.
          if (s == WriteStep::kSyncDir && !opened) {
            opened = true;
            return Status::Ok();
          }
          if (opened && s == step) ::_exit(42);
          return Status::Ok();
        };
      });
      INFO("crash before " << checkpoint::WriteStepName(step));
      REQUIRE(code == 42);
      auto opened = OpenOk(options);
      CHECK(opened.load.restored);
      CHECK(opened.contents.pods.count("uid-old") == 1);
      // Both puts' records were durable before the compaction started.
      REQUIRE(opened.contents.pods.count("uid-new") == 1);
      CHECK(opened.contents.pods.at("uid-new").at("c").count == 8);
    }
  }
}

TEST_CASE("a failed change is not applied, now or after a restart", "[sdk][ledger]") {
  TempDir dir;
  auto options = Options(dir);
  bool fail = false;
  options.journal_write.fault_hook = [&fail](checkpoint::JournalStep s) {
    if (fail && s == checkpoint::JournalStep::kSync) return ResourceExhaustedError("disk full");
    return Status::Ok();
  };
  {
    auto opened = OpenOk(options);
    REQUIRE(opened.ledger->Put("uid-a", "c", {1, ""}).ok());
    fail = true;
    CHECK(opened.ledger->Put("uid-b", "c", {2, ""}).code() == StatusCode::kResourceExhausted);
    CHECK(opened.ledger->store().containers() == 1);
    fail = false;
  }
  auto opened = OpenOk(options);
  CHECK(opened.contents.pods.count("uid-a") == 1);
  CHECK(opened.contents.pods.count("uid-b") == 0);
}

TEST_CASE("a damaged journal or snapshot is set aside and the plugin starts empty",
          "[sdk][ledger]") {
  TempDir dir;
  auto options = Options(dir);
  options.compact_after = 1000;
  {
    auto opened = OpenOk(options);
    for (int i = 0; i < 3; ++i)
      REQUIRE(opened.ledger->Put("uid-" + std::to_string(i), "c", {i, ""}).ok());
  }
  SECTION("journal") {
    std::string text;
    {
      std::ifstream in(options.path + ".journal");
      text.assign(std::istreambuf_iterator<char>(in), {});
    }
    const size_t second_line = text.find('\n') + 1;
    REQUIRE(text.size() > second_line + 30);
    text[second_line + 30] = static_cast<char>(text[second_line + 30] ^ 0x04);
    std::ofstream(options.path + ".journal", std::ios::trunc) << text;
  }
  SECTION("snapshot") {
    REQUIRE(Exists(options.path));
    std::ofstream(options.path, std::ios::trunc) << "{\"version\":2,";
  }
  auto opened = OpenOk(options);
  CHECK(opened.load.corrupt);
  CHECK(opened.contents.pods.empty());
  CHECK(CountAside(dir, "corrupt") == 2);  // snapshot and journal, kept as evidence
  REQUIRE(opened.ledger->Put("uid-x", "c", {1, ""}).ok());
  CHECK(OpenOk(options).contents.pods.size() == 1);
}

TEST_CASE("a bad entry is reported with its pod, container and field", "[sdk][ledger]") {
  TempDir dir;
  auto options = Options(dir);
  {
    auto store = OpenOk(options);
    REQUIRE(store.ledger->Put("uid-a", "main", {1, ""}).ok());
  }
  // A ledger whose entries lack "count": rewritten by a plugin of another entry type.
  struct Other {
    void Encode(EntryWriter& w) const { w.Set("size", int64_t{1}); }
    static StatusOr<Other> Decode(const EntryReader&) { return Other{}; }
  };
  {
    auto other = PodLedger<Other>::Open(options);
    REQUIRE(other.ok());
    REQUIRE(other->ledger->Put("uid-a", "main", Other{}).ok());
  }
  auto opened = OpenOk(options);
  CHECK(opened.load.corrupt);
  CHECK_THAT(opened.load.problem, Contains("pod uid-a container main: field \"count\" is missing"));
}

TEST_CASE("another machine's ledger stops the plugin unless reset", "[sdk][ledger]") {
  TempDir dir;
  auto options = Options(dir);
  {
    auto opened = OpenOk(options);
    REQUIRE(opened.ledger->Set("machine", "80 cpus").ok());
    REQUIRE(opened.ledger->Put("uid-a", "c", {1, ""}).ok());
  }
  const Ledger::CheckFn check = [](const Ledger::Contents& c) -> Status {
    if (c.settings.at("machine") != "96 cpus") {
      return FailedPreconditionError("written on \"" + c.settings.at("machine") + "\"");
    }
    return Status::Ok();
  };
  auto refused = Ledger::Open(options, check);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(refused.status().message(), Contains("--reset-state"));
  CHECK(Exists(options.path));

  options.reset_state = true;
  auto reset = OpenOk(options, check);
  CHECK(reset.contents.pods.empty());
  CHECK(CountAside(dir, "reset") == 2);
}

TEST_CASE("an older version is upgraded once and written in the current one", "[sdk][ledger]") {
  TempDir dir;
  auto options = Options(dir);
  std::filesystem::create_directories(dir.File("state"));
  rapidjson::Document v1;
  v1.Parse(R"({"held": {"uid-a": 3}})");
  REQUIRE(checkpoint::Write(options.path, 1, v1).ok());
  options.oldest_version = 1;
  const Ledger::UpgradeFn upgrade = [](const rapidjson::Value& data,
                                       uint32_t version) -> StatusOr<Ledger::Contents> {
    REQUIRE(version == 1);
    Ledger::Contents contents;
    for (const auto& m : data["held"].GetObject()) {
      contents.pods[m.name.GetString()]["c"] = Slots{m.value.GetInt(), ""};
    }
    return contents;
  };
  auto opened = Ledger::Open(options, {}, upgrade);
  REQUIRE(opened.ok());
  CHECK(opened->contents.pods.at("uid-a").at("c").count == 3);
  auto cp = checkpoint::Read(options.path, {.min_version = 1, .max_version = 2});
  REQUIRE(cp.ok());
  CHECK(cp->version == 2);
}

}  // namespace
}  // namespace qrm::sdk
