// StateStore: one checkpoint file per pod, durability (write before visible), recovery at
// load, the reconcile batch write, copy-on-write snapshots and thread safety.
#include "qrm/state/state_store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "checkpoint/base64.h"
#include "checkpoint/checkpoint_file.h"
#include "common/metrics/metrics.h"
#include "qrm/state/state_codec.h"
#include "testing/temp_dir.h"
#include "tests/unit/qrm/state/state_test_util.h"

namespace qrm::state {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using checkpoint::WriteStep;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;
using testutil::Container;
using testutil::CpuInfo;
using testutil::Exists;
using testutil::kSampleFiles;
using testutil::ListDir;
using testutil::LoadSample;
using testutil::RecordCounter;
using testutil::SampleState;
using testutil::Sorted;
using testutil::StateDir;
using testutil::Store;
using testutil::WriteCounter;

TEST_CASE("a missing state directory is created and loads as an empty state", "[state][load]") {
  StateDir d;
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  CHECK(store.Snapshot().empty());
  CHECK_FALSE(store.recovered_from_corruption());
  CHECK(store.recovery_message().empty());
  for (const std::string& dir : {d.dir, d.pods}) {
    INFO(dir);
    struct stat st;
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK((st.st_mode & 07777) == 0700);
  }
  // Loading writes nothing.
  CHECK(ListDir(d.pods).empty());
  CHECK(store.PodPath("u1") == d.Pod("u1"));
}

TEST_CASE("mutations are refused until Load succeeds", "[state]") {
  StateDir d;
  StateStore store(d.dir);
  Status s = store.PutContainer("u", "p", "n", "c", {});
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK(store.SetPodAffinity("u", "p", "n", NumaMask::FromBits(1)).code() ==
        StatusCode::kFailedPrecondition);
  CHECK(store.RemovePod("u").code() == StatusCode::kFailedPrecondition);
  CHECK(store.ApplyChanges({{"u", "c", "cpu", CpuInfo("0", 1)}}).code() ==
        StatusCode::kFailedPrecondition);
  CHECK_FALSE(Exists(d.dir));
}

TEST_CASE("a realistic state round-trips through one file per pod", "[state]") {
  StateDir d;
  const PodResources expected = SampleState();
  {
    StateStore store(d.dir);
    REQUIRE(store.Load().ok());
    Store(store, expected);
    CHECK(SamePods(store.Snapshot(), expected));
    auto pod = store.GetPod("uid-a");
    REQUIRE(pod != nullptr);
    CHECK(pod->pod_affinity == NumaMask::FromBits(0b11));
    auto container = store.GetContainer("uid-b", "pg");
    REQUIRE(container != nullptr);
    CHECK(container->resources.at("nic").allocated_quantity() == 0.5);
    CHECK(store.GetPod("nope") == nullptr);
    CHECK(store.GetContainer("uid-a", "nope") == nullptr);
    CHECK(store.GetContainer("nope", "main") == nullptr);
    CHECK(d.Files().empty());  // the journal holds them until a compaction
    REQUIRE(store.Compact().ok());
  }
  CHECK(d.Files() == kSampleFiles);

  // A new instance (a restarted host) sees exactly the same state.
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK_FALSE(reloaded.recovered_from_corruption());
  const PodResources got = reloaded.Snapshot();
  CHECK(SamePods(got, expected));
  const auto& main = got.at("uid-a")->containers.at("main");
  CHECK(main.request.annotations().at("qrm.io/qos") == "dedicated_cores");
  CHECK(main.request.resource_requests().at("memory") == 1073741824);
  CHECK(main.request.hint().nodes_size() == 2);
  CHECK(main.resources.at("cpu").envs().at("QRM_CPUS") == "2-3");
  CHECK(got.at("uid-a")->containers.at("init").request.resource_requests().at("cpu") == 0.5);
  CHECK(got.at("uid-c")->name == "ünïcödé \"pod\"");
  // Loaded containers carry the bytes cache, as stored ones do.
  for (const auto& [name, info] : main.resources) {
    CHECK(main.resource_bytes.at(name) == DeterministicBytes(info));
  }

  // Each file is an ordinary checkpoint of our version holding its pod.
  for (const auto& [uid, pod] : expected) {
    INFO(uid);
    auto cp = checkpoint::Read(d.Pod(uid));
    REQUIRE(cp.ok());
    CHECK(cp->version == StateStore::kVersion);
    auto decoded = DecodePod(cp->data);
    REQUIRE(decoded.ok());
    CHECK((*decoded == *pod));
  }
}

TEST_CASE("PutContainer replaces the container and clears the request's resource name", "[state]") {
  StateDir d;
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  ContainerAllocation first = Container("u1", "ns", "pod", "c", 2);
  first.request.set_resource_name("cpu");
  REQUIRE(store.PutContainer("u1", "pod", "ns", "c", first).ok());
  CHECK(store.GetContainer("u1", "c")->request.resource_name().empty());

  ContainerAllocation second = Container("u1", "ns", "pod", "c", 4);
  second.resources.erase("memory");
  // A stale cache from the caller is ignored: the store computes its own.
  second.resource_bytes["cpu"] = "stale";
  second.resource_bytes["memory"] = "stale";
  REQUIRE(store.PutContainer("u1", "pod", "ns", "c", second).ok());
  auto got = store.GetContainer("u1", "c");
  CHECK(got->resources.size() == 1);
  CHECK(got->resources.at("cpu").allocated_quantity() == 4);
  CHECK(got->resource_bytes.size() == 1);
  CHECK(got->resource_bytes.at("cpu") == DeterministicBytes(got->resources.at("cpu")));

  CHECK(store.PutContainer("u1", "pod", "ns", "", second).code() == StatusCode::kInvalidArgument);
  ContainerAllocation unnamed = second;
  unnamed.resources[""] = CpuInfo("0", 1);
  CHECK(store.PutContainer("u1", "pod", "ns", "c", unnamed).code() == StatusCode::kInvalidArgument);
  CHECK(store.SetPodAffinity("u1", "pod", "ns", NumaMask()).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("pod uids that are not safe file names are refused", "[state]") {
  StateDir d;
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  const std::string nul("a\0b", 3);
  for (const std::string& uid :
       {std::string(), std::string("a/b"), std::string("../escape"), std::string("."),
        std::string(".."), std::string(".hidden"), nul, std::string(201, 'x')}) {
    INFO("uid \"" << uid << "\"");
    Status s = store.PutContainer(uid, "p", "n", "c", Container(uid, "n", "p", "c", 1));
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(),
               Catch::Contains("pod uid \"" + uid.substr(0, std::min<size_t>(uid.find('\0'), 3))));
    CHECK(store.SetPodAffinity(uid, "p", "n", NumaMask::FromBits(1)).code() ==
          StatusCode::kInvalidArgument);
    CHECK(store.RemoveContainer(uid, "c").code() == StatusCode::kInvalidArgument);
    CHECK(store.RemovePod(uid).code() == StatusCode::kInvalidArgument);
    CHECK(store.ApplyChanges({{uid, "c", "cpu", CpuInfo("0", 1)}}).code() ==
          StatusCode::kInvalidArgument);
    CHECK(StateStore::ValidatePodUid(uid).code() == StatusCode::kInvalidArgument);
  }
  CHECK_THAT(StateStore::ValidatePodUid(nul).message(), Catch::Contains("a\\0b"));
  CHECK(ListDir(d.pods).empty());
  CHECK(ListDir(d.tmp.path()) == std::vector<std::string>{"state"});

  // Kubernetes uids (UUIDs) and anything else that is a plain file name are fine.
  for (const std::string& uid : {std::string("0f8e3f9c-4a5b-4c1d-9e2f-1a2b3c4d5e6f"),
                                 std::string(200, 'x'), std::string("a.b..c")}) {
    INFO(uid);
    REQUIRE(store.PutContainer(uid, "p", "n", "c", Container(uid, "n", "p", "c", 1)).ok());
  }
  REQUIRE(store.Compact().ok());
  for (const std::string& uid : {std::string("0f8e3f9c-4a5b-4c1d-9e2f-1a2b3c4d5e6f"),
                                 std::string(200, 'x'), std::string("a.b..c")}) {
    CHECK(Exists(d.Pod(uid)));
  }
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK(reloaded.Snapshot().size() == 3);
}

TEST_CASE("a mutation writes no pod file and the next compaction writes its pod's file only",
          "[state]") {
  struct Mutation {
    const char* name;
    std::string uid;  // the pod it changes
    std::function<Status(StateStore&)> run;
  };
  const std::vector<Mutation> mutations = {
      {"PutContainer (new pod)", "uid-new",
       [](StateStore& s) {
         return s.PutContainer("uid-new", "p", "n", "c", Container("uid-new", "n", "p", "c", 1));
       }},
      {"PutContainer (replace)", "uid-b",
       [](StateStore& s) {
         return s.PutContainer("uid-b", "db", "prod", "pg",
                               Container("uid-b", "prod", "db", "pg", 8));
       }},
      {"SetPodAffinity", "uid-b",
       [](StateStore& s) {
         return s.SetPodAffinity("uid-b", "db", "prod", NumaMask::FromBits(2));
       }},
      {"RemoveContainer", "uid-a",
       [](StateStore& s) { return s.RemoveContainer("uid-a", "init"); }},
      {"RemovePod", "uid-b", [](StateStore& s) { return s.RemovePod("uid-b"); }},
      {"ApplyChanges", "uid-a",
       [](StateStore& s) {
         return s.ApplyChanges({{"uid-a", "main", "cpu", CpuInfo("4-7", 4)},
                                {"uid-a", "init", "cpu", CpuInfo("8", 1)}});
       }},
  };
  for (const Mutation& m : mutations) {
    INFO(m.name);
    StateDir d;
    StateStore store(d.dir);
    LoadSample(store);
    const auto before = d.Contents();
    const PodResources snapshot = store.Snapshot();
    WriteCounter writes;
    store.SetFaultHookForTesting(writes.Hook());

    REQUIRE(m.run(store).ok());
    CHECK(writes.count() == 0);
    CHECK(d.Contents() == before);  // the journal holds the change
    REQUIRE(store.Compact().ok());
    CHECK(writes.count() == 1);
    const auto after = d.Contents();
    const std::string changed = m.uid + ".json";
    for (const auto& [name, file] : before) {
      if (name == changed) continue;
      INFO(name);
      REQUIRE(after.contains(name));
      CHECK(after.at(name) == file);  // byte-identical, and the same inode: not rewritten
    }
    if (std::string(m.name) == "RemovePod") {
      CHECK_FALSE(after.contains(changed));
    } else {
      REQUIRE(after.contains(changed));
      CHECK_FALSE((before.contains(changed) && after.at(changed) == before.at(changed)));
    }
    // Unchanged pods are shared between snapshots, not copied.
    const PodResources now = store.Snapshot();
    for (const auto& [uid, pod] : snapshot) {
      if (uid != m.uid) CHECK(now.at(uid) == pod);
    }
    StateStore reloaded(d.dir);
    REQUIRE(reloaded.Load().ok());
    CHECK(SamePods(reloaded.Snapshot(), now));
  }
}

TEST_CASE("RemovePod is one durable journal record, and the pod's file goes at compaction",
          "[state]") {
  StateDir d;
  StateStore store(d.dir);
  LoadSample(store);
  std::vector<WriteStep> steps;
  std::vector<checkpoint::JournalStep> journal_steps;
  store.SetFaultHookForTesting([&steps](WriteStep step) {
    steps.push_back(step);
    return Status::Ok();
  });
  store.SetJournalFaultHookForTesting([&journal_steps](checkpoint::JournalStep step) {
    journal_steps.push_back(step);
    return Status::Ok();
  });
  REQUIRE(store.RemovePod("uid-a").ok());
  CHECK(journal_steps == std::vector<checkpoint::JournalStep>{checkpoint::JournalStep::kAppend,
                                                              checkpoint::JournalStep::kSync});
  CHECK(steps.empty());
  CHECK(Exists(d.Pod("uid-a")));  // the journal's record wins over it at Load
  CHECK(store.GetPod("uid-a") == nullptr);
  REQUIRE(store.Compact().ok());
  CHECK(steps == std::vector<WriteStep>{WriteStep::kRename});  // the unlink
  CHECK(d.Files() == std::vector<std::string>{"uid-b.json", "uid-c.json"});

  // Gone for good, and removing it again writes nothing.
  steps.clear();
  journal_steps.clear();
  REQUIRE(store.RemovePod("uid-a").ok());
  CHECK(steps.empty());
  CHECK(journal_steps.empty());
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK(reloaded.GetPod("uid-a") == nullptr);
  CHECK(reloaded.Snapshot().size() == 2);
}

TEST_CASE("a failed write changes neither memory nor disk, for every mutation", "[state][faults]") {
  using checkpoint::JournalStep;
  struct Mutation {
    const char* name;
    std::function<Status(StateStore&)> run;
    std::vector<JournalStep> steps;  // the steps it goes through before the change is visible
  };
  const std::vector<JournalStep> write_steps = {JournalStep::kAppend, JournalStep::kSync};
  ContainerAllocation replacement = Container("uid-a", "default", "web", "main", 8);
  const std::vector<Mutation> mutations = {
      {"PutContainer (new pod)",
       [&](StateStore& s) { return s.PutContainer("uid-new", "p", "n", "c", replacement); },
       write_steps},
      {"PutContainer (replace)",
       [&](StateStore& s) {
         return s.PutContainer("uid-a", "web", "default", "main", replacement);
       },
       write_steps},
      {"SetPodAffinity (new pod)",
       [](StateStore& s) { return s.SetPodAffinity("uid-new", "p", "n", NumaMask::FromBits(4)); },
       write_steps},
      {"SetPodAffinity (existing)",
       [](StateStore& s) { return s.SetPodAffinity("uid-b", "db", "prod", NumaMask::FromBits(2)); },
       write_steps},
      {"RemoveContainer", [](StateStore& s) { return s.RemoveContainer("uid-a", "main"); },
       write_steps},
      {"RemovePod", [](StateStore& s) { return s.RemovePod("uid-b"); }, write_steps},
      {"ApplyChanges",
       [](StateStore& s) {
         return s.ApplyChanges({{"uid-a", "main", "cpu", CpuInfo("4-7", 4)},
                                {"uid-b", "pg", "cpu", CpuInfo("8-11", 4)}});
       },
       write_steps},
  };
  for (const Mutation& m : mutations) {
    for (JournalStep step : m.steps) {
      INFO(m.name << " failing at journal step " << static_cast<int>(step));
      StateDir d;
      StateStore store(d.dir);
      LoadSample(store);
      const PodResources before = store.Snapshot();
      const auto files_before = d.Contents();
      const std::string journal_before = ReadFile(store.JournalPath());

      store.SetJournalFaultHookForTesting([step](JournalStep s) {
        return s == step ? Status(StatusCode::kResourceExhausted, "injected: disk full")
                         : Status::Ok();
      });
      Status s = m.run(store);
      CHECK(s.code() == StatusCode::kResourceExhausted);
      CHECK_THAT(s.message(), Catch::Contains("injected"));
      CHECK(SamePods(store.Snapshot(), before));
      CHECK(d.Contents() == files_before);                     // no change, no temp file left
      CHECK(ReadFile(store.JournalPath()) == journal_before);  // the record taken back
      StateStore after_failure(d.dir);
      REQUIRE(after_failure.Load().ok());
      CHECK(SamePods(after_failure.Snapshot(), before));

      // Once the disk is back, the same mutation goes through.
      store.SetJournalFaultHookForTesting(nullptr);
      REQUIRE(m.run(store).ok());
      CHECK_FALSE(SamePods(store.Snapshot(), before));
      StateStore reloaded(d.dir);
      REQUIRE(reloaded.Load().ok());
      CHECK(SamePods(reloaded.Snapshot(), store.Snapshot()));
    }
  }
}

TEST_CASE("a corrupt pod file is moved aside and the other pods load", "[state][load]") {
  StateDir d;
  {
    StateStore store(d.dir);
    LoadSample(store);
    REQUIRE(store.Compact().ok());  // a clean stop: the files alone hold the state
  }
  const std::string path = d.Pod("uid-b");
  std::string content = ReadFile(path);
  content[content.size() / 2] ^= 0x01;  // a flipped bit the checksum catches
  WriteFile(path, content);

  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  CHECK(store.recovered_from_corruption());
  CHECK_THAT(store.recovery_message(), Catch::Contains("1 corrupt pod file(s)"));
  CHECK_THAT(store.recovery_message(), Catch::Contains("moved aside to " + path + ".corrupt-"));
  PodResources expected = SampleState();
  expected.erase("uid-b");
  CHECK(SamePods(store.Snapshot(), expected));
  CHECK_FALSE(Exists(path));
  const auto names = d.Files();
  REQUIRE(names.size() == 3);
  CHECK(names[0] == "uid-a.json");
  CHECK(names[1].starts_with("uid-b.json.corrupt-"));
  CHECK(ReadFile(d.pods + "/" + names[1]) == content);  // the evidence is kept as it was
  CHECK(names[2] == "uid-c.json");

  // The host then rebuilds the pod and carries on writing; the quarantined file is ignored.
  REQUIRE(store.PutContainer("uid-b", "db", "prod", "pg", Container("uid-b", "prod", "db", "pg", 1))
              .ok());
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK_FALSE(reloaded.recovered_from_corruption());
  CHECK(reloaded.Snapshot().size() == 3);
  REQUIRE(reloaded.Compact().ok());
  CHECK(d.Files().size() == 4);
}

TEST_CASE("every corrupt pod file is listed", "[state][load]") {
  StateDir d;
  {
    StateStore store(d.dir);
    LoadSample(store);
    REQUIRE(store.Compact().ok());  // a clean stop: the files alone hold the state
  }
  WriteFile(d.Pod("uid-a"), "");
  const std::string c = ReadFile(d.Pod("uid-c"));
  WriteFile(d.Pod("uid-c"), c.substr(0, c.size() / 2));  // truncated

  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  CHECK(store.recovered_from_corruption());
  const std::string message = store.recovery_message();
  CHECK_THAT(message, Catch::Contains("2 corrupt pod file(s)"));
  CHECK_THAT(message, Catch::Contains(d.Pod("uid-a") + ": corrupt: empty file"));
  CHECK_THAT(message, Catch::Contains(d.Pod("uid-c") + ": corrupt: truncated"));
  CHECK(store.Snapshot().size() == 1);
  CHECK(store.GetPod("uid-b") != nullptr);
}

TEST_CASE("a file of an unsupported version is moved aside, counted, and the others load",
          "[state][load]") {
  StateDir d;
  {
    StateStore store(d.dir);
    LoadSample(store);
    REQUIRE(store.Compact().ok());  // a clean stop: the files alone hold the state
  }
  rapidjson::Document data;
  REQUIRE(EncodePod(*SampleState().at("uid-b"), data).ok());
  REQUIRE(checkpoint::Write(d.Pod("uid-b"), StateStore::kVersion + 1, data).ok());
  const std::string newer = ReadFile(d.Pod("uid-b"));
  auto& counter =
      metrics::Default().GetCounter("qrm_checkpoint_corrupt_total", "", {{"file", "host"}});
  const double before = counter.Value();

  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  CHECK(store.recovered_from_corruption());
  CHECK_THAT(store.recovery_message(), Catch::Contains("unsupported version 2"));
  CHECK_THAT(store.recovery_message(),
             Catch::Contains("moved aside to " + d.Pod("uid-b") + ".unsupported-version-"));
  CHECK(store.GetPod("uid-b") == nullptr);
  CHECK(store.GetPod("uid-a") != nullptr);
  CHECK(counter.Value() == before + 1);
  // The other qrm's file is kept, byte for byte, under its new name.
  std::string aside;
  for (const std::string& name : d.Files()) {
    if (name.starts_with("uid-b.json.unsupported-version-")) aside = name;
  }
  REQUIRE_FALSE(aside.empty());
  CHECK(ReadFile(d.dir + "/pods/" + aside) == newer);
  // The store is usable: the pod can be written afresh.
  CHECK(store.PutContainer("uid-b", "p", "n", "c", {}).ok());
}

TEST_CASE("invalid content in a checksummed file is data loss and the file stays",
          "[state][load]") {
  StateDir d;
  StateStore setup(d.dir);
  REQUIRE(setup.Load().ok());  // creates the directories
  const std::string path = d.Pod("uid-x");
  const std::string request = checkpoint::Base64Encode(DeterministicBytes(pb::ResourceRequest()));
  rapidjson::Document data;
  const std::string json = R"({"uid":"uid-x","name":"p","namespace":"n","containers":{"ctr-y":)"
                           R"({"request":")" +
                           request + R"(","resources":{"res-z":"%%%notbase64%%%"}}}})";
  data.Parse(json.c_str());
  REQUIRE_FALSE(data.HasParseError());
  REQUIRE(checkpoint::Write(path, StateStore::kVersion, data).ok());
  const std::string bytes = ReadFile(path);

  StateStore store(d.dir);
  Status s = store.Load();
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK_THAT(s.message(), Catch::Contains("ctr-y"));
  CHECK_THAT(s.message(), Catch::Contains("res-z"));
  CHECK_THAT(s.message(), Catch::Contains(path));  // which names the pod
  CHECK_FALSE(store.recovered_from_corruption());
  CHECK(store.Snapshot().empty());
  CHECK(ReadFile(path) == bytes);
  CHECK(d.Files() == std::vector<std::string>{"uid-x.json"});
  CHECK(store.RemovePod("uid-x").code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("a file not named after the pod inside it is data loss", "[state][load]") {
  StateDir d;
  {
    StateStore store(d.dir);
    LoadSample(store);
    REQUIRE(store.Compact().ok());  // a clean stop: the files alone hold the state
  }
  SECTION("another pod's uid") {
    // e.g. copied by hand: uid-b's content under uid-z's name.
    REQUIRE(::rename(d.Pod("uid-b").c_str(), d.Pod("uid-z").c_str()) == 0);
    const auto files = d.Contents();
    StateStore store(d.dir);
    Status s = store.Load();
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK_THAT(s.message(), Catch::Contains(d.Pod("uid-z")));
    CHECK_THAT(s.message(), Catch::Contains("holds pod \"uid-b\""));
    CHECK(d.Contents() == files);
    CHECK(store.PutContainer("uid-z", "p", "n", "c", {}).code() == StatusCode::kFailedPrecondition);
  }
  SECTION("a name that is no uid") {
    const std::string long_name = d.pods + "/" + std::string(201, 'x') + ".json";
    REQUIRE(::rename(d.Pod("uid-b").c_str(), long_name.c_str()) == 0);
    StateStore store(d.dir);
    Status s = store.Load();
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK_THAT(s.message(), Catch::Contains("not named after a pod"));
    CHECK(Exists(long_name));
  }
}

TEST_CASE("Load removes temp files left by crashed writes and ignores other names",
          "[state][load]") {
  StateDir d;
  {
    StateStore store(d.dir);
    LoadSample(store);
    REQUIRE(store.Compact().ok());  // a clean stop: the files alone hold the state
  }
  WriteFile(d.pods + "/.uid-a.json.tmp-a1b2c3", "half a write");    // an update of uid-a
  WriteFile(d.pods + "/.uid-new.json.tmp-d4e5f6", "half a write");  // a pod never completed
  WriteFile(d.pods + "/uid-q.json.corrupt-1700000000", "evidence");
  WriteFile(d.pods + "/README", "not a pod");
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  CHECK_FALSE(store.recovered_from_corruption());
  CHECK(SamePods(store.Snapshot(), SampleState()));
  CHECK(d.Files() == std::vector<std::string>{"README", "uid-a.json", "uid-b.json", "uid-c.json",
                                              "uid-q.json.corrupt-1700000000"});
}

TEST_CASE("ApplyChanges writes each affected pod once and skips vanished pods and containers",
          "[state][reconcile]") {
  StateDir d;
  StateStore store(d.dir);
  LoadSample(store);
  const auto files_before = d.Contents();
  RecordCounter records;
  store.SetJournalFaultHookForTesting(records.Hook());

  const auto nic_before = store.GetContainer("uid-b", "pg")->resources.at("nic");
  REQUIRE(store
              .ApplyChanges({
                  {"uid-a", "main", "cpu", CpuInfo("4-7", 4)},
                  {"uid-b", "pg", "cpu", CpuInfo("8-11", 2.5)},
                  {"uid-b", "pg", "gpu", CpuInfo("0", 1)},         // new resource: added
                  {"uid-gone", "main", "cpu", CpuInfo("0-1", 2)},  // pod vanished
                  {"uid-a", "gone", "cpu", CpuInfo("0-1", 2)},     // container vanished
                  {"uid-c", "gone", "cpu", CpuInfo("0-1", 2)},     // ditto: uid-c unchanged
                  {"uid-a", "init", "cpu", CpuInfo("12", 1)},      // replaced below
                  {"uid-a", "init", "cpu", CpuInfo("13", 1)},      // the later change wins
              })
              .ok());
  CHECK(records.count() == 2);          // uid-a and uid-b, once each
  CHECK(d.Contents() == files_before);  // the files wait for the compaction

  const PodResources s = store.Snapshot();
  CHECK(s.at("uid-a")->containers.at("main").resources.at("cpu").allocation_result() == "4-7");
  CHECK(s.at("uid-a")->containers.at("init").resources.at("cpu").allocation_result() == "13");
  CHECK(s.at("uid-b")->containers.at("pg").resources.at("cpu").allocated_quantity() == 2.5);
  CHECK(s.at("uid-b")->containers.at("pg").resources.contains("gpu"));
  CHECK(DeterministicBytes(s.at("uid-b")->containers.at("pg").resources.at("nic")) ==
        DeterministicBytes(nic_before));
  // The cache follows the changes.
  for (const auto& [uid, pod] : s) {
    for (const auto& [name, container] : pod->containers) {
      CHECK(container.resource_bytes.size() == container.resources.size());
      for (const auto& [resource, info] : container.resources) {
        CHECK(container.resource_bytes.at(resource) == DeterministicBytes(info));
      }
    }
  }
  CHECK_FALSE(s.contains("uid-gone"));
  CHECK_FALSE(s.at("uid-a")->containers.contains("gone"));

  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK(SamePods(reloaded.Snapshot(), s));

  // Nothing left to change: no write at all.
  REQUIRE(store.ApplyChanges({}).ok());
  REQUIRE(store
              .ApplyChanges({{"uid-gone", "main", "cpu", CpuInfo("0-1", 2)},
                             {"uid-a", "main", "cpu", CpuInfo("4-7", 4)}})  // already so
              .ok());
  CHECK(records.count() == 2);
}

TEST_CASE("ApplyChanges keeps the pods it wrote when another pod's write fails",
          "[state][reconcile][faults]") {
  StateDir d;
  StateStore store(d.dir);
  LoadSample(store);
  const PodResources before = store.Snapshot();
  // The second record written (whichever pod's it is) cannot be written.
  std::atomic<int> appends{0};
  store.SetJournalFaultHookForTesting([&appends](checkpoint::JournalStep step) {
    if (step == checkpoint::JournalStep::kAppend && ++appends == 2) {
      return Status(StatusCode::kResourceExhausted, "injected: disk full");
    }
    return Status::Ok();
  });
  std::set<std::string> failed;
  Status s = store.ApplyChanges({{"uid-a", "main", "cpu", CpuInfo("4-7", 4)},
                                 {"uid-b", "pg", "cpu", CpuInfo("8-11", 4)},
                                 {"uid-c", "sidecar", "cpu", CpuInfo("12", 1)}},
                                &failed);
  CHECK_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("injected"));
  CHECK(appends == 3);  // all three were tried
  REQUIRE(failed.size() == 1);
  const std::string lost = *failed.begin();
  const PodResources after = store.Snapshot();
  CHECK(after.at(lost) == before.at(lost));  // untouched
  for (const auto& [uid, pod] : after) {
    if (uid != lost) CHECK_FALSE(pod == before.at(uid));
  }
  CHECK(Sorted(ListDir(d.pods)) == kSampleFiles);  // no temp file left

  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK(SamePods(reloaded.Snapshot(), after));
}

TEST_CASE("ApplyChanges writes many pods, each once, sharing the journal's syncs",
          "[state][reconcile]") {
  StateDir d;
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  constexpr int kPods = 40;  // more than kMaxParallelWrites
  std::vector<StateStore::ResourceChange> changes;
  for (int i = 0; i < kPods; ++i) {
    const std::string uid = "uid-" + std::to_string(i);
    REQUIRE(store.PutContainer(uid, "p", "n", "c", Container(uid, "n", "p", "c", 1)).ok());
    changes.push_back({uid, "c", "cpu", CpuInfo(std::to_string(i), 1)});
  }
  std::atomic<int> syncs{0};
  std::atomic<int> appends{0};
  store.SetJournalFaultHookForTesting([&](checkpoint::JournalStep step) {
    if (step == checkpoint::JournalStep::kAppend) ++appends;
    if (step == checkpoint::JournalStep::kSync) {
      ++syncs;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a slow disk
    }
    return Status::Ok();
  });
  REQUIRE(store.ApplyChanges(changes).ok());
  CHECK(appends == kPods);
  // Records written while a sync ran share the next one: without sharing there would be one
  // sync per record. (How many share depends on scheduling: under ASan on a loaded 2-core
  // machine it was 2 records per sync, so the bound is "some", not "most".)
  CHECK(syncs < kPods);
  store.SetJournalFaultHookForTesting(nullptr);
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  const PodResources s = reloaded.Snapshot();
  for (int i = 0; i < kPods; ++i) {
    const std::string uid = "uid-" + std::to_string(i);
    CHECK(s.at(uid)->containers.at("c").resources.at("cpu").allocation_result() ==
          std::to_string(i));
  }
  CHECK(SamePods(s, store.Snapshot()));
}

TEST_CASE("removing the last container keeps the pod and its affinity", "[state]") {
  StateDir d;
  StateStore store(d.dir);
  LoadSample(store);
  RecordCounter writes;
  store.SetJournalFaultHookForTesting(writes.Hook());

  REQUIRE(store.RemoveContainer("uid-a", "main").ok());
  REQUIRE(store.RemoveContainer("uid-a", "init").ok());
  CHECK(writes.count() == 2);
  auto pod = store.GetPod("uid-a");
  REQUIRE(pod != nullptr);
  CHECK(pod->containers.empty());
  CHECK(pod->pod_affinity == NumaMask::FromBits(0b11));
  {
    StateStore reloaded(d.dir);
    REQUIRE(reloaded.Load().ok());
    auto again = reloaded.GetPod("uid-a");
    REQUIRE(again != nullptr);
    CHECK(again->pod_affinity == NumaMask::FromBits(0b11));
    CHECK(again->name == "web");
  }

  // Removing what is not there is fine and writes nothing.
  REQUIRE(store.RemoveContainer("uid-a", "main").ok());
  REQUIRE(store.RemoveContainer("uid-nope", "main").ok());
  REQUIRE(store.RemovePod("uid-nope").ok());
  CHECK(writes.count() == 2);

  REQUIRE(store.RemovePod("uid-a").ok());
  CHECK(writes.count() == 3);
  CHECK(store.GetPod("uid-a") == nullptr);
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK(reloaded.GetPod("uid-a") == nullptr);
  CHECK(reloaded.Snapshot().size() == 2);
}

TEST_CASE("a snapshot is stable while the store changes", "[state]") {
  StateDir d;
  StateStore store(d.dir);
  LoadSample(store);
  const PodResources held = store.Snapshot();
  const auto held_container = store.GetContainer("uid-a", "main");
  const ContainerAllocation main_copy = *held_container;

  REQUIRE(store
              .PutContainer("uid-a", "web", "default", "main",
                            Container("uid-a", "default", "web", "main", 16))
              .ok());
  REQUIRE(store.ApplyChanges({{"uid-b", "pg", "cpu", CpuInfo("30-31", 2)}}).ok());
  REQUIRE(store.RemovePod("uid-c").ok());
  REQUIRE(store.SetPodAffinity("uid-new", "p", "n", NumaMask::FromBits(1)).ok());

  // What was handed out still reads as it was...
  CHECK(SamePods(held, SampleState()));
  CHECK((*held_container == main_copy));
  CHECK(held.at("uid-c")->name == "ünïcödé \"pod\"");
  // ...while the store moved on.
  const PodResources now = store.Snapshot();
  CHECK(now.size() == 3);
  CHECK(now.at("uid-a")->containers.at("main").resources.at("cpu").allocated_quantity() == 16);
  CHECK(now.at("uid-b")->containers.at("pg").resources.at("cpu").allocation_result() == "30-31");
  CHECK_FALSE(now.contains("uid-c"));
  CHECK_FALSE(SamePods(held, now));
}

TEST_CASE("writers of different pods share a durable write instead of queueing for their own",
          "[state][concurrency]") {
  StateDir d;
  StateStore store(d.dir);
  LoadSample(store);
  // Pod A's sync stalls for 300 ms; B and C write their records meanwhile.
  std::atomic<int> syncs{0};
  std::atomic<bool> a_stalled{false};
  std::atomic<bool> release{false};
  store.SetJournalFaultHookForTesting([&](checkpoint::JournalStep step) {
    if (step == checkpoint::JournalStep::kSync && syncs++ == 0) {
      a_stalled = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Status::Ok();
  });
  Status a_status;
  std::thread a([&] {
    a_status = store.PutContainer("pod-a", "a", "n", "c", Container("pod-a", "n", "a", "c", 1));
  });
  while (!a_stalled) std::this_thread::yield();
  const auto lines = [&] {
    const std::string j = ReadFile(store.JournalPath());
    return std::count(j.begin(), j.end(), '\n');
  };
  const auto lines_with_a = lines();
  std::vector<Status> others(2);
  std::vector<std::thread> writers;
  for (int i = 0; i < 2; ++i) {
    writers.emplace_back([&, i] {
      const std::string uid = i == 0 ? "pod-b" : "pod-c";
      others[i] = store.PutContainer(uid, "x", "n", "c", Container(uid, "n", "x", "c", 1));
    });
  }
  // Both records are written while A's sync is stalled; readers never wait for a writer's disk.
  while (lines() < lines_with_a + 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const PodResources during = store.Snapshot();
  CHECK_FALSE(during.contains("pod-a"));  // not visible before it is durable
  CHECK_FALSE(during.contains("pod-b"));
  release = true;
  a.join();
  for (auto& t : writers) t.join();
  REQUIRE(a_status.ok());
  for (const Status& s : others) REQUIRE(s.ok());
  CHECK(syncs == 2);  // A's, then one for B and C
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK(reloaded.Snapshot().size() == 6);
}

TEST_CASE("concurrent writers of one pod lose no update", "[state][concurrency]") {
  StateDir d;
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  // Every write stalls a little, so that the writers overlap.
  store.SetFaultHookForTesting([](WriteStep step) {
    if (step == WriteStep::kSyncTemp) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return Status::Ok();
  });
  constexpr int kThreads = 4;
  constexpr int kContainersPerThread = 5;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kContainersPerThread; ++i) {
        const std::string name = "c-" + std::to_string(t) + "-" + std::to_string(i);
        if (!store.PutContainer("shared", "p", "n", name, Container("shared", "n", "p", name, 1))
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK(store.GetPod("shared")->containers.size() == kThreads * kContainersPerThread);
  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  CHECK(SamePods(reloaded.Snapshot(), store.Snapshot()));
}

TEST_CASE("concurrent writers of different pods all persist", "[state][concurrency]") {
  StateDir d;
  StateStore store(d.dir);
  REQUIRE(store.Load().ok());
  constexpr int kThreads = 6;
  constexpr int kPodsPerThread = 8;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPodsPerThread; ++i) {
        const std::string uid = "uid-" + std::to_string(t) + "-" + std::to_string(i);
        if (!store.PutContainer(uid, "pod", "ns", "c", Container(uid, "ns", "pod", "c", 1)).ok()) {
          ++failures;
        }
        if (i % 2 == 0 && !store.SetPodAffinity(uid, "pod", "ns", NumaMask::FromBits(1)).ok()) {
          ++failures;
        }
        (void)store.Snapshot();  // readers interleave with writers
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK(ListDir(d.pods).empty());  // the journal holds them all until a compaction

  StateStore reloaded(d.dir);
  REQUIRE(reloaded.Load().ok());
  const PodResources s = reloaded.Snapshot();
  CHECK(s.size() == kThreads * kPodsPerThread);
  CHECK(SamePods(s, store.Snapshot()));
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPodsPerThread; ++i) {
      const std::string uid = "uid-" + std::to_string(t) + "-" + std::to_string(i);
      INFO(uid);
      REQUIRE(s.contains(uid));
      CHECK(s.at(uid)->containers.contains("c"));
      CHECK(s.at(uid)->pod_affinity.has_value() == (i % 2 == 0));
    }
  }
  REQUIRE(store.Compact().ok());
  CHECK(ListDir(d.pods).size() == kThreads * kPodsPerThread);
}

}  // namespace
}  // namespace qrm::state
