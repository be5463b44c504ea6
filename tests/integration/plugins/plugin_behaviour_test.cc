// The real plugins behind the host on other machine shapes: rejection under
// single-numa-node, bad input reaching the kubelet as a clear error with nothing kept, and a
// plugin killed with SIGKILL coming back with the same state, and one whose journal lost its
// last records in a machine crash (--state-sync host-replays) given them back by the host.
#include <filesystem>
#include <set>

#include <catch2/catch.hpp>
#include <signal.h>

#include "common/cpu_set.h"
#include "plugins/sdk/pod_ledger.h"
#include "tests/integration/plugins/doc_machine_fixture.h"

namespace qrm::host::testing {
namespace {

admission::ContainerRequest Dedicated(const std::string& uid, double cpus, bool numa_binding) {
  admission::ContainerRequest r = Request(uid, "main", {{"cpu", cpus}}, "dedicated_cores");
  if (numa_binding) {
    r.annotations["katalyst.kubewharf.io/memory_enhancement"] = R"({"numa_binding":"true"})";
  }
  return r;
}

CpuSet CpusOf(const admission::AdmissionResult& r) {
  auto cpus = CpuSet::Parse(r.update.resources.cpuset_cpus());
  REQUIRE(cpus.ok());
  return *cpus;
}

TEST_CASE("single-numa-node rejects a NUMA-bound request larger than any node, keeping nothing") {
  DocMachineFixture f(::qrm::machine::fake::FourBy32SmtShape());
  HostOptions options = f.DocOptions();
  options.admission.policy = topology::Policy::kSingleNumaNode;
  Host& host = f.StartHost(options);
  // 8 reserved CPUs: one core on each of the 4 nodes; no reclaimed pool of its own.
  f.StartRealPlugin("cpu", {"--reserved-cpu-count", "8", "--reclaimed-pool-size", "0"});
  REQUIRE(f.WaitRegistered("cpu"));

  auto too_big = host.admission().Admit(Dedicated("big", 33, true));
  REQUIRE_FALSE(too_big.ok());
  CHECK(host.state().GetPod("big") == nullptr);

  // Each node has 30 allocatable CPUs: three pods of 30 take three whole nodes, never
  // overlapping (the fourth node keeps the shared pool's CPUs).
  CpuSet taken;
  for (int i = 0; i < 3; ++i) {
    auto r = host.admission().Admit(Dedicated("fit-" + std::to_string(i), 30, true));
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CpuSet cpus = CpusOf(*r);
    CHECK(cpus.Size() == 30);
    CHECK_FALSE(cpus.Overlaps(taken));
    taken = taken.Union(cpus);
  }
}

TEST_CASE("bad requests fail with the key and value named and leave no allocation") {
  DocMachineFixture f;
  Host& host = f.StartHost(f.DocOptions());
  f.StartRealPlugin("cpu", {"--reserved-cpus", "0-1,40-41"});
  REQUIRE(f.WaitRegistered("cpu"));

  struct Case {
    std::string name;
    admission::ContainerRequest request;
    std::string expected;
  };
  std::vector<Case> cases;
  {
    admission::ContainerRequest r = Request("q", "main", {{"cpu", 2}}, "platinum_cores");
    cases.push_back({"unknown qos level", r, "platinum_cores"});
  }
  {
    admission::ContainerRequest r = Dedicated("m", 2, false);
    r.annotations["katalyst.kubewharf.io/memory_enhancement"] = "{numa_binding: yes";
    cases.push_back({"malformed memory_enhancement", r, "memory_enhancement"});
  }
  cases.push_back({"absurd request", Dedicated("a", 1e9, false), "cpu"});
  {
    admission::ContainerRequest r = DocPod("r", "r", "no-such-role", {{"cpu", 2}});
    cases.push_back({"unknown role", r, "no-such-role"});
  }
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto r = host.admission().Admit(c.request);
      REQUIRE_FALSE(r.ok());
      CHECK_THAT(r.status().message(), Catch::Contains(c.expected));
      CHECK(host.state().GetPod(c.request.pod_uid) == nullptr);
    }
  }
  // Nothing was kept anywhere: a reconcile finds no allocation to push, and the whole of
  // node 1 minus its reserved CPUs is still free.
  REQUIRE(host.reconciler().RunOnce().ok());
  CHECK(f.applier().calls().empty());
  auto all = host.admission().Admit(Dedicated("all-of-node1", 38, true));
  INFO(all.status().ToString());
  REQUIRE(all.ok());
}

TEST_CASE("a CPU plugin killed with SIGKILL restarts with its state: same answers, no overlap") {
  DocMachineFixture f(::qrm::machine::fake::FourBy32SmtShape());
  Host& host = f.StartHost(f.DocOptions());
  f.StartRealPlugin("cpu", {"--reserved-cpu-count", "4"});
  REQUIRE(f.WaitRegistered("cpu"));

  // The runtime runs every pod of this test (reconcile releases pods the runtime lost).
  std::set<std::string> running;
  for (int i = 0; i < 6; ++i) running.insert("before-" + std::to_string(i));
  for (int i = 0; i < 4; ++i) running.insert("after-" + std::to_string(i));
  f.view().Set(running);
  std::map<std::string, CpuSet> held;
  for (int i = 0; i < 6; ++i) {
    const std::string uid = "before-" + std::to_string(i);
    auto r = host.admission().Admit(Dedicated(uid, 5 + i, i % 2 == 0));
    REQUIRE(r.ok());
    held[uid] = CpusOf(*r);
  }
  const auto before_crash = host.registry().Find("cpu");
  f.real_plugin("cpu").Kill(SIGKILL);
  f.StopRealPlugin("cpu");

  // The restarted plugin replaces its stale socket and registers again.
  f.StartRealPlugin("cpu", {"--reserved-cpu-count", "4"});
  REQUIRE(WaitFor([&] {
    auto e = host.registry().Find("cpu");
    return e != nullptr && e != before_crash && !e->stopped();
  }));
  // The restored plugin reports exactly what it had: reconcile changes nothing.
  f.applier().clear();
  auto stats = host.reconciler().RunOnce();
  REQUIRE(stats.ok());
  CHECK(stats->resources_changed == 0);
  CHECK(f.applier().calls().empty());

  // New exclusive CPUs never overlap the ones held before the crash.
  CpuSet before;
  for (const auto& [uid, cpus] : held) before = before.Union(cpus);
  for (int i = 0; i < 4; ++i) {
    auto r = host.admission().Admit(Dedicated("after-" + std::to_string(i), 7, true));
    REQUIRE(r.ok());
    CpuSet cpus = CpusOf(*r);
    INFO("new " << cpus.ToString() << " held " << before.ToString());
    CHECK_FALSE(cpus.Overlaps(before));
    before = before.Union(cpus);
  }
}

TEST_CASE("what a machine crash takes from a CPU plugin's journal, the host gives back") {
  // The plugins' default --state-sync host-replays answers once a change is in the journal
  // file, before fdatasync: a machine crash may take the journal's last records. The host's
  // own checkpoint is durable before it answers the kubelet, and it replays what a
  // registering plugin lacks and releases what it holds for pods that are gone.
  DocMachineFixture f(::qrm::machine::fake::FourBy32SmtShape());
  Host& host = f.StartHost(f.DocOptions());
  f.StartRealPlugin("cpu", {"--reserved-cpu-count", "4"});
  REQUIRE(f.WaitRegistered("cpu"));
  const std::string ledger = f.File("state-cpu") + "/cpu_plugin_state";
  f.view().Set({"leaving", "kept-0", "kept-1", "lost-0", "lost-1"});
  std::map<std::string, CpuSet> held;
  for (const char* uid : {"leaving", "kept-0", "kept-1"}) {
    auto r = host.admission().Admit(Dedicated(uid, 3, true));
    REQUIRE(r.ok());
    held[uid] = CpusOf(*r);
  }
  // What reached the disk before the crash: up to here.
  const auto durable_bytes = std::filesystem::file_size(ledger + ".journal");
  for (const char* uid : {"lost-0", "lost-1"}) {
    auto r = host.admission().Admit(Dedicated(uid, 3, true));
    REQUIRE(r.ok());
    held[uid] = CpusOf(*r);
  }
  // "leaving" stops running; the tick releases it on the plugin (a record after the cut, too).
  f.view().Set({"kept-0", "kept-1", "lost-0", "lost-1"});
  auto collected = host.reconciler().RunOnce();
  REQUIRE(collected.ok());
  CHECK(collected->pods_collected == 1);
  held.erase("leaving");

  // The crash: the plugin dies, and its journal keeps only what had reached the disk.
  const auto before_crash = host.registry().Find("cpu");
  f.real_plugin("cpu").Kill(SIGKILL);
  f.StopRealPlugin("cpu");
  std::filesystem::resize_file(ledger + ".journal", durable_bytes);
  {
    auto lost = sdk::ReadLedger(ledger);
    REQUIRE(lost.ok());
    CHECK(lost->pods.count("leaving") == 1);  // released, but the release was lost
    CHECK(lost->pods.count("lost-0") == 0);   // admitted, but the plugin forgot
  }

  f.StartRealPlugin("cpu", {"--reserved-cpu-count", "4"});
  REQUIRE(WaitFor([&] {
    auto e = host.registry().Find("cpu");
    return e != nullptr && e != before_crash && !e->stopped();
  }));
  // Replayed at registration on the CPUs they had; the pod that is gone released by the tick.
  f.applier().clear();
  auto stats = host.reconciler().RunOnce();
  REQUIRE(stats.ok());
  CHECK(stats->resources_changed == 0);
  CHECK(stats->orphans_released == 1);
  CHECK(f.applier().calls().empty());
  auto restored = sdk::ReadLedger(ledger);
  REQUIRE(restored.ok());
  std::set<std::string> pods;
  for (const auto& [uid, containers] : restored->pods) pods.insert(uid);
  CHECK(pods == std::set<std::string>{"kept-0", "kept-1", "lost-0", "lost-1"});
  for (const auto& [uid, cpus] : held) {
    INFO(uid);
    CHECK(host.state().GetContainer(uid, "main")->resources.at("cpu").allocation_result() ==
          cpus.ToString());
  }
  // Nobody's CPUs are handed out twice.
  CpuSet taken;
  for (const auto& [uid, cpus] : held) taken = taken.Union(cpus);
  f.view().Set({"kept-0", "kept-1", "lost-0", "lost-1", "new"});
  auto fresh = host.admission().Admit(Dedicated("new", 3, true));
  REQUIRE(fresh.ok());
  CHECK_FALSE(CpusOf(*fresh).Overlaps(taken));
}

}  // namespace
}  // namespace qrm::host::testing
