// StateStore: durability (write before visible), recovery at load, the reconcile batch
// write, and thread safety.
#include "qrm/state/state_store.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "checkpoint/base64.h"
#include "checkpoint/checkpoint_file.h"
#include "qrm/state/state_codec.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/state/state_test_util.h"

namespace qrm::host {
namespace {

using checkpoint::WriteStep;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;
using testutil::Container;
using testutil::CpuInfo;
using testutil::ListDir;
using testutil::SampleState;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Stores `state` through the public API, the way admission builds it up.
void Store(StateStore& store, const PodResources& state) {
  for (const auto& [uid, pod] : state) {
    if (pod.pod_affinity) {
      REQUIRE(store.SetPodAffinity(uid, pod.name, pod.ns, *pod.pod_affinity).ok());
    }
    for (const auto& [name, container] : pod.containers) {
      REQUIRE(store.PutContainer(uid, pod.name, pod.ns, name, container).ok());
    }
  }
}

// Counts completed renames, i.e. durable writes that reached the file.
struct WriteCounter {
  std::shared_ptr<std::atomic<int>> renames = std::make_shared<std::atomic<int>>(0);
  checkpoint::FaultHook Hook() const {
    return [renames = renames](WriteStep step) {
      if (step == WriteStep::kRename) ++*renames;
      return Status::Ok();
    };
  }
  int count() const { return renames->load(); }
};

TEST_CASE("a missing checkpoint loads as an empty state", "[state][load]") {
  TempDir dir;
  StateStore store(dir.File("qrm_checkpoint.json"));
  REQUIRE(store.Load().ok());
  CHECK(store.Snapshot().empty());
  CHECK_FALSE(store.recovered_from_corruption());
  CHECK(store.recovery_message().empty());
  // Loading writes nothing.
  CHECK(ListDir(dir.path()).empty());
}

TEST_CASE("mutations are refused until Load succeeds", "[state]") {
  TempDir dir;
  const std::string path = dir.File("qrm_checkpoint.json");
  StateStore store(path);
  Status s = store.PutContainer("u", "p", "n", "c", {});
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK(store.SetPodAffinity("u", "p", "n", NumaMask::FromBits(1)).code() ==
        StatusCode::kFailedPrecondition);
  CHECK(store.RemovePod("u").code() == StatusCode::kFailedPrecondition);
  CHECK_FALSE(Exists(path));
}

TEST_CASE("a realistic state round-trips through the file", "[state]") {
  TempDir dir;
  const std::string path = dir.File("qrm_checkpoint.json");
  const PodResources expected = SampleState();
  {
    StateStore store(path);
    REQUIRE(store.Load().ok());
    Store(store, expected);
    CHECK((store.Snapshot() == expected));
    auto pod = store.GetPod("uid-a");
    REQUIRE(pod.has_value());
    CHECK(pod->pod_affinity == NumaMask::FromBits(0b11));
    auto container = store.GetContainer("uid-b", "pg");
    REQUIRE(container.has_value());
    CHECK(container->resources.at("nic").allocated_quantity() == 0.5);
    CHECK_FALSE(store.GetPod("nope").has_value());
    CHECK_FALSE(store.GetContainer("uid-a", "nope").has_value());
    CHECK_FALSE(store.GetContainer("nope", "main").has_value());
  }
  // A new instance (a restarted host) sees exactly the same state.
  StateStore reloaded(path);
  REQUIRE(reloaded.Load().ok());
  CHECK_FALSE(reloaded.recovered_from_corruption());
  const PodResources got = reloaded.Snapshot();
  CHECK((got == expected));
  const auto& main = got.at("uid-a").containers.at("main");
  CHECK(main.request.annotations().at("qrm.io/qos") == "dedicated_cores");
  CHECK(main.request.resource_requests().at("memory") == 1073741824);
  CHECK(main.request.hint().nodes_size() == 2);
  CHECK(main.resources.at("cpu").envs().at("QRM_CPUS") == "2-3");
  CHECK(got.at("uid-a").containers.at("init").request.resource_requests().at("cpu") == 0.5);
  CHECK(got.at("uid-c").name == "ünïcödé \"pod\"");

  // The file is an ordinary checkpoint of our version.
  auto cp = checkpoint::Read(path);
  REQUIRE(cp.ok());
  CHECK(cp->version == StateStore::kVersion);
  auto decoded = DecodePodResources(cp->data);
  REQUIRE(decoded.ok());
  CHECK((*decoded == expected));
}

TEST_CASE("PutContainer replaces the container and clears the request's resource name", "[state]") {
  TempDir dir;
  StateStore store(dir.File("qrm_checkpoint.json"));
  REQUIRE(store.Load().ok());
  ContainerAllocation first = Container("u1", "ns", "pod", "c", 2);
  first.request.set_resource_name("cpu");
  REQUIRE(store.PutContainer("u1", "pod", "ns", "c", first).ok());
  CHECK(store.GetContainer("u1", "c")->request.resource_name().empty());

  ContainerAllocation second = Container("u1", "ns", "pod", "c", 4);
  second.resources.erase("memory");
  REQUIRE(store.PutContainer("u1", "pod", "ns", "c", second).ok());
  auto got = store.GetContainer("u1", "c");
  CHECK(got->resources.size() == 1);
  CHECK(got->resources.at("cpu").allocated_quantity() == 4);

  CHECK(store.PutContainer("", "pod", "ns", "c", second).code() == StatusCode::kInvalidArgument);
  CHECK(store.PutContainer("u1", "pod", "ns", "", second).code() == StatusCode::kInvalidArgument);
  CHECK(store.SetPodAffinity("u1", "pod", "ns", NumaMask()).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("a failed write changes neither memory nor disk, for every mutation", "[state][faults]") {
  struct Mutation {
    const char* name;
    std::function<Status(StateStore&)> run;
  };
  ContainerAllocation replacement = Container("uid-a", "default", "web", "main", 8);
  const std::vector<Mutation> mutations = {
      {"PutContainer (new pod)",
       [&](StateStore& s) { return s.PutContainer("uid-new", "p", "n", "c", replacement); }},
      {"PutContainer (replace)",
       [&](StateStore& s) {
         return s.PutContainer("uid-a", "web", "default", "main", replacement);
       }},
      {"SetPodAffinity (new pod)",
       [](StateStore& s) { return s.SetPodAffinity("uid-new", "p", "n", NumaMask::FromBits(4)); }},
      {"SetPodAffinity (existing)",
       [](StateStore& s) {
         return s.SetPodAffinity("uid-b", "db", "prod", NumaMask::FromBits(2));
       }},
      {"RemoveContainer", [](StateStore& s) { return s.RemoveContainer("uid-a", "main"); }},
      {"RemovePod", [](StateStore& s) { return s.RemovePod("uid-b"); }},
      {"ApplyChanges",
       [](StateStore& s) {
         return s.ApplyChanges({{"uid-a", "main", "cpu", CpuInfo("4-7", 4)},
                                {"uid-b", "pg", "cpu", CpuInfo("8-11", 4)}});
       }},
  };
  const WriteStep steps[] = {WriteStep::kCreateTemp, WriteStep::kWriteTemp, WriteStep::kSyncTemp,
                             WriteStep::kRename};
  for (const Mutation& m : mutations) {
    for (WriteStep step : steps) {
      INFO(m.name << " failing at " << checkpoint::WriteStepName(step));
      TempDir dir;
      const std::string path = dir.File("qrm_checkpoint.json");
      StateStore store(path);
      REQUIRE(store.Load().ok());
      Store(store, SampleState());
      const PodResources before = store.Snapshot();
      const std::string bytes_before = ReadFile(path);

      store.SetFaultHookForTesting([step](WriteStep s) {
        return s == step ? Status(StatusCode::kResourceExhausted, "injected: disk full")
                         : Status::Ok();
      });
      Status s = m.run(store);
      CHECK(s.code() == StatusCode::kResourceExhausted);
      CHECK_THAT(s.message(), Catch::Contains("injected"));
      CHECK((store.Snapshot() == before));
      CHECK(ReadFile(path) == bytes_before);
      CHECK(ListDir(dir.path()) == std::vector<std::string>{"qrm_checkpoint.json"});

      // Once the disk is back, the same mutation goes through.
      store.SetFaultHookForTesting(nullptr);
      REQUIRE(m.run(store).ok());
      CHECK_FALSE((store.Snapshot() == before));
      StateStore reloaded(path);
      REQUIRE(reloaded.Load().ok());
      CHECK((reloaded.Snapshot() == store.Snapshot()));
    }
  }
}

TEST_CASE("a corrupt checkpoint is moved aside and the state starts empty", "[state][load]") {
  TempDir dir;
  const std::string path = dir.File("qrm_checkpoint.json");
  {
    StateStore store(path);
    REQUIRE(store.Load().ok());
    Store(store, SampleState());
  }
  std::string content = ReadFile(path);
  content[content.size() / 2] ^= 0x01;  // a flipped bit the checksum catches
  WriteFile(path, content);

  StateStore store(path);
  REQUIRE(store.Load().ok());
  CHECK(store.recovered_from_corruption());
  CHECK_THAT(store.recovery_message(), Catch::Contains("corrupt"));
  CHECK_THAT(store.recovery_message(), Catch::Contains("moved aside to " + path + ".corrupt-"));
  CHECK(store.Snapshot().empty());
  CHECK_FALSE(Exists(path));
  const auto names = ListDir(dir.path());
  REQUIRE(names.size() == 1);
  CHECK(ReadFile(dir.File(names[0])) == content);  // the evidence is kept as it was

  // The host then rebuilds and carries on writing.
  REQUIRE(store.PutContainer("u1", "p", "n", "c", Container("u1", "n", "p", "c", 1)).ok());
  StateStore reloaded(path);
  REQUIRE(reloaded.Load().ok());
  CHECK_FALSE(reloaded.recovered_from_corruption());
  CHECK(reloaded.Snapshot().size() == 1);
}

TEST_CASE("an unsupported version is an error and the file is untouched", "[state][load]") {
  TempDir dir;
  const std::string path = dir.File("qrm_checkpoint.json");
  rapidjson::Document data;
  REQUIRE(EncodePodResources(SampleState(), data).ok());
  REQUIRE(checkpoint::Write(path, StateStore::kVersion + 1, data).ok());
  const std::string bytes = ReadFile(path);

  StateStore store(path);
  Status s = store.Load();
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(s.message(), Catch::Contains("unsupported version 2"));
  CHECK_FALSE(store.recovered_from_corruption());
  CHECK(ReadFile(path) == bytes);
  // The store must not overwrite a newer qrm's file.
  CHECK(store.PutContainer("u1", "p", "n", "c", {}).code() == StatusCode::kFailedPrecondition);
  CHECK(ReadFile(path) == bytes);
  CHECK(ListDir(dir.path()) == std::vector<std::string>{"qrm_checkpoint.json"});
}

TEST_CASE("invalid content in a checksummed file is data loss and the file stays",
          "[state][load]") {
  TempDir dir;
  const std::string path = dir.File("qrm_checkpoint.json");
  const std::string request = checkpoint::Base64Encode(DeterministicBytes(pb::ResourceRequest()));
  rapidjson::Document data;
  const std::string json = R"({"pods":{"uid-x":{"name":"p","namespace":"n","containers":{"ctr-y":)"
                           R"({"request":")" +
                           request + R"(","resources":{"res-z":"%%%notbase64%%%"}}}}}})";
  data.Parse(json.c_str());
  REQUIRE_FALSE(data.HasParseError());
  REQUIRE(checkpoint::Write(path, StateStore::kVersion, data).ok());
  const std::string bytes = ReadFile(path);

  StateStore store(path);
  Status s = store.Load();
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK_THAT(s.message(), Catch::Contains("uid-x"));
  CHECK_THAT(s.message(), Catch::Contains("ctr-y"));
  CHECK_THAT(s.message(), Catch::Contains("res-z"));
  CHECK_THAT(s.message(), Catch::Contains(path));
  CHECK_FALSE(store.recovered_from_corruption());
  CHECK(store.Snapshot().empty());
  CHECK(ReadFile(path) == bytes);
  CHECK(ListDir(dir.path()) == std::vector<std::string>{"qrm_checkpoint.json"});
  CHECK(store.RemovePod("uid-x").code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("Load removes temp files left by a crashed write", "[state][load]") {
  TempDir dir;
  const std::string path = dir.File("qrm_checkpoint.json");
  {
    StateStore store(path);
    REQUIRE(store.Load().ok());
    Store(store, SampleState());
  }
  WriteFile(dir.File(".qrm_checkpoint.json.tmp-a1b2c3"), "half a write");
  StateStore store(path);
  REQUIRE(store.Load().ok());
  CHECK((store.Snapshot() == SampleState()));
  CHECK(ListDir(dir.path()) == std::vector<std::string>{"qrm_checkpoint.json"});
}

TEST_CASE("ApplyChanges writes once and skips vanished pods and containers", "[state][reconcile]") {
  TempDir dir;
  const std::string path = dir.File("qrm_checkpoint.json");
  StateStore store(path);
  REQUIRE(store.Load().ok());
  Store(store, SampleState());
  WriteCounter writes;
  store.SetFaultHookForTesting(writes.Hook());

  const auto nic_before = store.GetContainer("uid-b", "pg")->resources.at("nic");
  REQUIRE(store
              .ApplyChanges({
                  {"uid-a", "main", "cpu", CpuInfo("4-7", 4)},
                  {"uid-b", "pg", "cpu", CpuInfo("8-11", 2.5)},
                  {"uid-b", "pg", "gpu", CpuInfo("0", 1)},         // new resource: added
                  {"uid-gone", "main", "cpu", CpuInfo("0-1", 2)},  // pod vanished
                  {"uid-a", "gone", "cpu", CpuInfo("0-1", 2)},     // container vanished
                  {"uid-a", "init", "cpu", CpuInfo("12", 1)},      // replaced below
                  {"uid-a", "init", "cpu", CpuInfo("13", 1)},      // the later change wins
              })
              .ok());
  CHECK(writes.count() == 1);

  const PodResources s = store.Snapshot();
  CHECK(s.at("uid-a").containers.at("main").resources.at("cpu").allocation_result() == "4-7");
  CHECK(s.at("uid-a").containers.at("init").resources.at("cpu").allocation_result() == "13");
  CHECK(s.at("uid-b").containers.at("pg").resources.at("cpu").allocated_quantity() == 2.5);
  CHECK(s.at("uid-b").containers.at("pg").resources.contains("gpu"));
  CHECK(DeterministicBytes(s.at("uid-b").containers.at("pg").resources.at("nic")) ==
        DeterministicBytes(nic_before));
  CHECK_FALSE(s.contains("uid-gone"));
  CHECK_FALSE(s.at("uid-a").containers.contains("gone"));

  StateStore reloaded(path);
  REQUIRE(reloaded.Load().ok());
  CHECK((reloaded.Snapshot() == s));

  // Nothing left to change: no write at all.
  REQUIRE(store.ApplyChanges({}).ok());
  REQUIRE(store
              .ApplyChanges({{"uid-gone", "main", "cpu", CpuInfo("0-1", 2)},
                             {"uid-a", "main", "cpu", CpuInfo("4-7", 4)}})  // already so
              .ok());
  CHECK(writes.count() == 1);
}

TEST_CASE("removing the last container keeps the pod and its affinity", "[state]") {
  TempDir dir;
  const std::string path = dir.File("qrm_checkpoint.json");
  StateStore store(path);
  REQUIRE(store.Load().ok());
  Store(store, SampleState());
  WriteCounter writes;
  store.SetFaultHookForTesting(writes.Hook());

  REQUIRE(store.RemoveContainer("uid-a", "main").ok());
  REQUIRE(store.RemoveContainer("uid-a", "init").ok());
  CHECK(writes.count() == 2);
  auto pod = store.GetPod("uid-a");
  REQUIRE(pod.has_value());
  CHECK(pod->containers.empty());
  CHECK(pod->pod_affinity == NumaMask::FromBits(0b11));
  {
    StateStore reloaded(path);
    REQUIRE(reloaded.Load().ok());
    auto again = reloaded.GetPod("uid-a");
    REQUIRE(again.has_value());
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
  CHECK_FALSE(store.GetPod("uid-a").has_value());
  StateStore reloaded(path);
  REQUIRE(reloaded.Load().ok());
  CHECK_FALSE(reloaded.GetPod("uid-a").has_value());
  CHECK(reloaded.Snapshot().size() == 2);
}

TEST_CASE("concurrent writers of different pods all persist", "[state][concurrency]") {
  TempDir dir;
  const std::string path = dir.File("qrm_checkpoint.json");
  StateStore store(path);
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

  StateStore reloaded(path);
  REQUIRE(reloaded.Load().ok());
  const PodResources s = reloaded.Snapshot();
  CHECK(s.size() == kThreads * kPodsPerThread);
  CHECK((s == store.Snapshot()));
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPodsPerThread; ++i) {
      const std::string uid = "uid-" + std::to_string(t) + "-" + std::to_string(i);
      INFO(uid);
      REQUIRE(s.contains(uid));
      CHECK(s.at(uid).containers.contains("c"));
      CHECK(s.at(uid).pod_affinity.has_value() == (i % 2 == 0));
    }
  }
}

}  // namespace
}  // namespace qrm::host
