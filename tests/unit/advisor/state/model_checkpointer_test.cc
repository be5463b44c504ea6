// ModelCheckpointer: file names, the write rate, restore outcomes (missing, restored, corrupt
// files moved aside, another configuration, another version, a checksummed file with a bad
// state) and its counters.
#include "advisor/state/model_checkpointer.h"

#include <filesystem>

#include "checkpoint/checkpoint_file.h"
#include "testing/temp_dir.h"
#include "tests/unit/advisor/state/state_test_util.h"

namespace qrm::advisor {
namespace {

using test::BusyStep;
using test::FastOptions;
using test::Make;
using test::Parse;
using test::RequireSamePrediction;
using test::StateText;

CheckpointerOptions Options(const qrm::testing::TempDir& dir) {
  CheckpointerOptions o;
  o.dir = dir.path();
  o.write.sync = false;  // tests need no durability
  return o;
}

// Files in `dir` whose name starts with `prefix`.
int CountFiles(const std::string& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().starts_with(prefix)) ++n;
  }
  return n;
}

// A learned model's file in `dir`; returns its path.
std::string WriteLearned(const qrm::testing::TempDir& dir, const std::string& spec,
                         const ModelOptions& o) {
  auto model = Make(spec, o);
  for (int i = 1; i <= 200; ++i) model->Observe(BusyStep(i));
  ModelCheckpointer saver(*model, "cpu", Options(dir));
  REQUIRE(saver.Save(BusyStep(200).time).ok());
  return saver.path();
}

TEST_CASE("checkpoint files are named after the scope and the model", "[advisor][state]") {
  CHECK(ModelCheckpointer::PathFor("/var/lib/qrm", "cpu", "koordinator") ==
        "/var/lib/qrm/model-cpu-koordinator.json");
  CHECK(ModelCheckpointer::PathFor("d", "pool", "max:borg-default+resource-central") ==
        "d/model-pool-max_borg-default+resource-central.json");
  CHECK(ModelCheckpointer::PathFor("d", "memory", "../x") == "d/model-memory-.._x.json");
}

TEST_CASE("a saved model is restored and predicts as before", "[advisor][state]") {
  qrm::testing::TempDir dir;
  for (const std::string& spec : test::AllSpecs()) {
    INFO(spec);
    auto a = Make(spec, FastOptions());
    for (int i = 1; i <= 200; ++i) a->Observe(BusyStep(i));
    ModelCheckpointer saver(*a, "cpu", Options(dir));
    REQUIRE(saver.Save(BusyStep(200).time).ok());
    CHECK(saver.writes() == 1);

    auto b = Make(spec, FastOptions());
    ModelCheckpointer loader(*b, "cpu", Options(dir));
    CHECK(loader.Restore() == RestoreOutcome::kRestored);
    CHECK(StateText(*b) == StateText(*a));
    for (int i = 201; i <= 260; ++i) {
      a->Observe(BusyStep(i));
      b->Observe(BusyStep(i));
      RequireSamePrediction(a->Predict(BusyStep(i).time), b->Predict(BusyStep(i).time));
    }
  }
}

TEST_CASE("a missing file leaves the model fresh", "[advisor][state]") {
  qrm::testing::TempDir dir;
  auto m = Make("koordinator", FastOptions());
  ModelCheckpointer c(*m, "cpu", Options(dir));
  CHECK(c.Restore() == RestoreOutcome::kMissing);
  CHECK_FALSE(m->Predict(0).known);
  CHECK(c.corrupt_files() == 0);
}

TEST_CASE("a corrupt file is moved aside and the model starts fresh", "[advisor][state]") {
  qrm::testing::TempDir dir;
  const std::string path = WriteLearned(dir, "koordinator", FastOptions());
  std::string content = qrm::testing::ReadFile(path);
  content[content.size() / 2] ^= 1;  // the checksum no longer matches
  qrm::testing::WriteFile(path, content);
  auto m = Make("koordinator", FastOptions());
  ModelCheckpointer c(*m, "cpu", Options(dir));
  CHECK(c.Restore() == RestoreOutcome::kCorrupt);
  CHECK_FALSE(m->Predict(0).known);
  CHECK(c.corrupt_files() == 1);
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(CountFiles(dir.path(), "model-cpu-koordinator.json.corrupt-") == 1);
  // The next write starts afresh.
  CHECK(c.MaybeSave(100).ok());
  CHECK(std::filesystem::exists(path));
}

TEST_CASE("a checksummed file whose state is malformed is moved aside too", "[advisor][state]") {
  qrm::testing::TempDir dir;
  const std::string path = WriteLearned(dir, "adaptive", FastOptions());
  StatusOr<checkpoint::Checkpoint> file = checkpoint::Read(path);
  REQUIRE(file.ok());
  file->data["state"]["alpha"].SetString("zz");
  REQUIRE(checkpoint::Write(path, kModelCheckpointVersion, file->data).ok());
  auto m = Make("adaptive", FastOptions());
  ModelCheckpointer c(*m, "cpu", Options(dir));
  CHECK(c.Restore() == RestoreOutcome::kCorrupt);
  CHECK_FALSE(m->Predict(0).known);
  CHECK(c.corrupt_files() == 1);
  CHECK(CountFiles(dir.path(), "model-cpu-adaptive.json.corrupt-") == 1);
}

TEST_CASE("a file of another scope or model is corrupt", "[advisor][state]") {
  qrm::testing::TempDir dir;
  const std::string path = WriteLearned(dir, "koordinator", FastOptions());
  std::filesystem::rename(path, ModelCheckpointer::PathFor(dir.path(), "memory", "koordinator"));
  auto m = Make("koordinator", FastOptions());
  ModelCheckpointer c(*m, "memory", Options(dir));
  CHECK(c.Restore() == RestoreOutcome::kCorrupt);
  CHECK_FALSE(m->Predict(0).known);
}

TEST_CASE(
    "a configuration change starts the model afresh and keeps the file until the next "
    "write",
    "[advisor][state]") {
  qrm::testing::TempDir dir;
  const std::string path = WriteLearned(dir, "koordinator", FastOptions());
  ModelOptions changed = FastOptions();
  changed.koordinator.histogram.half_life_s = 120;
  auto m = Make("koordinator", changed);
  ModelCheckpointer c(*m, "cpu", Options(dir));
  CHECK(c.Restore() == RestoreOutcome::kConfigChanged);
  CHECK_FALSE(m->Predict(0).known);
  CHECK(c.corrupt_files() == 0);
  CHECK(std::filesystem::exists(path));
}

TEST_CASE("a file of an unknown version is left in place", "[advisor][state]") {
  qrm::testing::TempDir dir;
  const std::string path = WriteLearned(dir, "nsigma-v1", FastOptions());
  StatusOr<checkpoint::Checkpoint> file = checkpoint::Read(path);
  REQUIRE(file.ok());
  REQUIRE(checkpoint::Write(path, kModelCheckpointVersion + 1, file->data).ok());
  auto m = Make("nsigma-v1", FastOptions());
  ModelCheckpointer c(*m, "cpu", Options(dir));
  CHECK(c.Restore() == RestoreOutcome::kUnsupported);
  CHECK_FALSE(m->Predict(0).known);
  CHECK(std::filesystem::exists(path));
}

TEST_CASE("MaybeSave writes at once, then at most once per interval", "[advisor][state]") {
  qrm::testing::TempDir dir;
  auto m = Make("koordinator", FastOptions());
  m->Observe(BusyStep(1));
  ModelCheckpointer c(*m, "cpu", Options(dir));
  auto saved_at = [&] { return (*checkpoint::Read(c.path())).data["saved_at"].GetInt64(); };
  REQUIRE(c.MaybeSave(1000).ok());
  CHECK(c.writes() == 1);
  CHECK(saved_at() == 1000);
  for (int64_t now = 1060; now < 1600; now += 60) REQUIRE(c.MaybeSave(now).ok());
  CHECK(c.writes() == 1);
  REQUIRE(c.MaybeSave(1600).ok());  // 10 minutes after the first
  CHECK(c.writes() == 2);
  CHECK(saved_at() == 1600);
  REQUIRE(c.MaybeSave(1000).ok());  // the clock went back: not stuck for the difference
  CHECK(c.writes() == 3);
  REQUIRE(c.Save(1001).ok());  // at shutdown, whatever the interval
  CHECK(c.writes() == 4);
  CHECK(c.write_failures() == 0);
}

TEST_CASE("a failed write is counted and not retried before the interval", "[advisor][state]") {
  qrm::testing::TempDir dir;
  auto m = Make("adaptive", FastOptions());
  CheckpointerOptions o = Options(dir);
  int calls = 0;
  o.write.fault_hook = [&](checkpoint::WriteStep) {
    ++calls;
    return ResourceExhaustedError("disk full");
  };
  ModelCheckpointer c(*m, "cpu", o);
  CHECK(c.MaybeSave(0).code() == StatusCode::kResourceExhausted);
  CHECK(c.MaybeSave(60).ok());  // not due
  CHECK(c.write_failures() == 1);
  CHECK(c.writes() == 0);
  CHECK(calls == 1);
}

TEST_CASE("the directory is created on the first write", "[advisor][state]") {
  qrm::testing::TempDir dir;
  auto m = Make("borg-default", FastOptions());
  CheckpointerOptions o = Options(dir);
  o.dir = dir.File("a/b");
  ModelCheckpointer c(*m, "cpu", o);
  CHECK(c.Restore() == RestoreOutcome::kMissing);
  REQUIRE(c.MaybeSave(0).ok());
  CHECK(std::filesystem::exists(dir.File("a/b/model-cpu-borg-default.json")));
}

TEST_CASE("restored pods that are gone are dropped by RetainPods", "[advisor][state]") {
  qrm::testing::TempDir dir;
  WriteLearned(dir, "koordinator", FastOptions());
  auto m = Make("koordinator", FastOptions());
  ModelCheckpointer c(*m, "cpu", Options(dir));
  REQUIRE(c.Restore() == RestoreOutcome::kRestored);
  const std::string before = StateText(*m);
  CHECK(before.find("\"p0\"") != std::string::npos);
  m->RetainPods({"p1", "p2"});
  const std::string after = StateText(*m);
  CHECK(after.find("\"p0\"") == std::string::npos);
  CHECK(after.find("\"p1\"") != std::string::npos);
}

}  // namespace
}  // namespace qrm::advisor
