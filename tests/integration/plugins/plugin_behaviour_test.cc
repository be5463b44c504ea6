// The real plugins behind the host on other machine shapes: rejection under
// single-numa-node, bad input reaching the kubelet as a clear error with nothing kept, and a
// plugin killed with SIGKILL coming back with the same state.
#include <set>

#include <catch2/catch.hpp>
#include <signal.h>

#include "common/cpu_set.h"
#include "tests/integration/plugins/doc_machine_fixture.h"

namespace qrm::host::testing {
namespace {

ContainerRequest Dedicated(const std::string& uid, double cpus, bool numa_binding) {
  ContainerRequest r = Request(uid, "main", {{"cpu", cpus}}, "dedicated_cores");
  if (numa_binding) {
    r.annotations["katalyst.kubewharf.io/memory_enhancement"] = R"({"numa_binding":"true"})";
  }
  return r;
}

CpuSet CpusOf(const AdmissionResult& r) {
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
    ContainerRequest request;
    std::string expected;
  };
  std::vector<Case> cases;
  {
    ContainerRequest r = Request("q", "main", {{"cpu", 2}}, "platinum_cores");
    cases.push_back({"unknown qos level", r, "platinum_cores"});
  }
  {
    ContainerRequest r = Dedicated("m", 2, false);
    r.annotations["katalyst.kubewharf.io/memory_enhancement"] = "{numa_binding: yes";
    cases.push_back({"malformed memory_enhancement", r, "memory_enhancement"});
  }
  cases.push_back({"absurd request", Dedicated("a", 1e9, false), "cpu"});
  {
    ContainerRequest r = DocPod("r", "r", "no-such-role", {{"cpu", 2}});
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

}  // namespace
}  // namespace qrm::host::testing
