// One QoS truth in the host, and the kubewharf kubelet's semantics, against real plugin
// processes: the failure policy resolves pod roles through the role table as the plugins do,
// requests carry the kubewharf pod_role/pod_type and only the plugin's own resources, and a
// container admitted without its CPU plugin is confined and reported.
#include <csignal>
#include <fstream>
#include <sstream>

#include "common/metrics/metrics.h"
#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

constexpr const char* kRoles =
    R"({"storage": {"qos_level": "dedicated_cores"}, "web": {"qos_level": "shared_cores"}})";

HostOptions QosOptions(const HostFixture& f) {
  HostOptions o = f.Options();
  o.admission.roles = *qos::RoleTable::Parse(kRoles);
  o.admission.rpc_timeout = std::chrono::milliseconds(500);
  o.admission.online_cpus = *CpuSet::Parse("0-7");
  return o;
}

// A pod with no qos_level annotation, its role given by the kubewharf label or by qrm's
// annotation.
admission::ContainerRequest RolePod(const std::string& uid, const std::string& role,
                                    bool by_label) {
  admission::ContainerRequest r = Request(uid, "c0", {{"cpu", 2}});
  r.annotations.clear();
  if (by_label) {
    r.labels["katalyst.kubewharf.io/pod_role"] = role;
  } else {
    r.annotations["kubernetes.io/pod-role"] = role;
  }
  return r;
}

// Takes the CPU plugin down: killed, or stopped so that it hangs until the deadline.
void TakeDown(HostFixture& f, int signal) {
  if (signal == SIGKILL) {
    f.plugin("cpu").Kill(SIGKILL);
  } else {
    const pid_t pid = f.plugin("cpu").pid();
    REQUIRE(::kill(pid, SIGSTOP) == 0);
    // kill() returns before every thread has stopped: wait until the process is stopped.
    REQUIRE(WaitFor([&] {
      std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
      std::string line;
      std::getline(stat, line);
      const size_t paren = line.rfind(')');
      return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'T';
    }));
  }
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST_CASE("a pod whose role maps to dedicated_cores is refused while the CPU plugin is down",
          "[admission][qos]") {
  const int signal = GENERATE(SIGKILL, SIGSTOP);
  const bool by_label = GENERATE(true, false);
  INFO("signal " << signal << (by_label ? ", role label" : ", role annotation"));
  HostFixture f;
  Host& host = f.StartHost(QosOptions(f));
  f.StartPlugin("cpu");
  REQUIRE(f.WaitRegistered("cpu"));
  TakeDown(f, signal);

  auto dedicated = host.admission().Admit(RolePod("p1", "storage", by_label));
  INFO(dedicated.status().ToString());
  REQUIRE_FALSE(dedicated.ok());
  CHECK(host.state().GetPod("p1") == nullptr);

  // The same outage lets a pod whose role maps to shared_cores through without the CPU plugin.
  auto shared = host.admission().Admit(RolePod("p2", "web", by_label));
  INFO(shared.status().ToString());
  REQUIRE(shared.ok());
  CHECK(shared->skipped_resources == std::vector<std::string>{"cpu"});
}

TEST_CASE("only pods explicitly shared_cores skip a failing plugin; unannotated is configurable",
          "[admission][qos]") {
  const bool unannotated_ignore = GENERATE(true, false);
  HostFixture f;
  HostOptions o = QosOptions(f);
  o.admission.failure_policies.unannotated =
      unannotated_ignore ? admission::FailurePolicy::kIgnore : admission::FailurePolicy::kFail;
  Host& host = f.StartHost(o);
  f.StartPlugin("cpu", {"--fail", "GetTopologyHints"});
  REQUIRE(f.WaitRegistered("cpu"));

  admission::ContainerRequest none = Request("p1", "c0", {{"cpu", 1}});
  none.annotations.clear();
  CHECK(host.admission().Admit(none).ok() == unannotated_ignore);

  // shared_cores by annotation, but a role the table does not know: not explicitly shared.
  admission::ContainerRequest ghost = Request("p2", "c0", {{"cpu", 1}}, "shared_cores");
  ghost.labels["katalyst.kubewharf.io/pod_role"] = "ghost";
  CHECK_FALSE(host.admission().Admit(ghost).ok());
  CHECK(host.admission().Admit(Request("p3", "c0", {{"cpu", 1}}, "shared_cores")).ok());
  CHECK_FALSE(host.admission().Admit(Request("p4", "c0", {{"cpu", 1}}, "reclaimed_cores")).ok());
}

TEST_CASE("plugins get the kubewharf pod_role and pod_type and only their own resources",
          "[admission][qos]") {
  HostFixture f;
  HostOptions o = QosOptions(f);
  o.registry.accompanying_resources = {{"test.qrm.io/a-bandwidth", "test.qrm.io/a"}};
  Host& host = f.StartHost(o);
  f.StartPlugin("test.qrm.io/a", {"--request-log", f.File("a.requests")});
  f.StartPlugin("test.qrm.io/b", {"--request-log", f.File("b.requests")});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/b"));

  admission::ContainerRequest r = Request(
      "p1", "c0", {{"test.qrm.io/a", 1}, {"test.qrm.io/a-bandwidth", 100}, {"test.qrm.io/b", 2}});
  r.annotations.clear();
  r.labels["katalyst.kubewharf.io/pod_role"] = "web";
  r.annotations["katalyst.kubewharf.io/pod_type"] = "batch";
  auto result = host.admission().Admit(r);
  INFO(result.status().ToString());
  REQUIRE(result.ok());

  const std::string a = "p1 c0 role=web type=batch requests=test.qrm.io/a,test.qrm.io/a-bandwidth";
  const std::string b = "p1 c0 role=web type=batch requests=test.qrm.io/b";
  CHECK(Lines(f.File("a.requests")) ==
        std::vector<std::string>{"GetTopologyHints " + a, "Allocate " + a});
  CHECK(Lines(f.File("b.requests")) ==
        std::vector<std::string>{"GetTopologyHints " + b, "Allocate " + b});
}

TEST_CASE("a container admitted without the CPU plugin is confined to the non-exclusive CPUs",
          "[admission][qos][confinement]") {
  HostFixture f;
  Host& host = f.StartHost(QosOptions(f));
  f.StartPlugin("cpu", {"--oci-property", "CpusetCpus", "--result", "2-3"});
  REQUIRE(f.WaitRegistered("cpu"));
  auto dedicated = host.admission().Admit(Request("p1", "c0", {{"cpu", 2}}, "dedicated_cores"));
  REQUIRE(dedicated.ok());
  REQUIRE(dedicated->update.resources.cpuset_cpus() == "2-3");
  f.plugin("cpu").Kill(SIGKILL);

  auto shared = host.admission().Admit(Request("p2", "c0", {{"cpu", 1}}, "shared_cores"));
  INFO(shared.status().ToString());
  REQUIRE(shared.ok());
  CHECK(shared->skipped_resources == std::vector<std::string>{"cpu"});
  CHECK(shared->update.resources.cpuset_cpus() == "0-1,4-7");
  // Re-applies after a restart and re-admission say the same.
  CHECK(host.admission().CurrentUpdate("p2", "c0")->resources.cpuset_cpus() == "0-1,4-7");
  CHECK(host.admission()
            .Admit(Request("p2", "c0", {{"cpu", 1}}, "shared_cores"))
            ->update.resources.cpuset_cpus() == "0-1,4-7");

  // Kept current: the dedicated pod leaves, and the next tick widens p2 to every CPU.
  REQUIRE(host.registry().Find("cpu")->stopped());
  REQUIRE(host.admission().RemovePod("p1").ok());
  f.view().Set({"p2"});
  f.applier().clear();
  REQUIRE(host.reconciler().RunOnce().ok());
  auto calls = f.applier().calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].uid == "p2");
  CHECK(calls[0].update.resources.cpuset_cpus() == "0-7");
  // Nothing changed since: nothing is pushed again.
  f.applier().clear();
  REQUIRE(host.reconciler().RunOnce().ok());
  CHECK(f.applier().calls().empty());
}

TEST_CASE("a skipped resource its plugin refuses once back is reported once, not retried silently",
          "[admission][qos][confinement]") {
  LogCapture log("admission");
  HostFixture f;
  Host& host = f.StartHost(QosOptions(f));
  f.StartPlugin("cpu");
  REQUIRE(f.WaitRegistered("cpu"));
  f.plugin("cpu").Kill(SIGKILL);
  auto shared = host.admission().Admit(Request("p1", "c0", {{"cpu", 1}}, "shared_cores"));
  REQUIRE(shared.ok());
  REQUIRE(shared->skipped_resources == std::vector<std::string>{"cpu"});
  f.view().Set({"p1"});

  // Back, but it refuses the skipped Allocate (the request does not fit).
  f.StopPlugin("cpu");
  f.StartPlugin("cpu", {"--need-reconcile", "--fail", "Allocate", "--fail-exhausted"});
  REQUIRE(f.WaitRegistered("cpu"));
  for (int i = 0; i < 3; ++i) REQUIRE(host.reconciler().RunOnce().ok());

  CHECK(f.Calls("cpu", "Allocate") == 3);  // still retried, capacity may free up
  CHECK_THAT(host.admission().skipped_status().Refusal({"p1", "c0", "cpu"}),
             Catch::Contains("failed as configured"));
  CHECK(log.At(spdlog::level::warn, "cpu cannot be allocated").size() == 1);
  CHECK(metrics::Default().GetGauge("qrm_skipped_resources_unallocatable", "").Value() == 1);
  // Still confined meanwhile (no exclusive allocation: every CPU).
  CHECK(host.admission().CurrentUpdate("p1", "c0")->resources.cpuset_cpus() == "0-7");

  // Released: nothing is reported any more.
  f.view().Set({});
  REQUIRE(host.reconciler().RunOnce().ok());
  CHECK(host.state().GetPod("p1") == nullptr);
  CHECK(metrics::Default().GetGauge("qrm_skipped_resources_unallocatable", "").Value() == 0);
}

}  // namespace
}  // namespace qrm::host::testing
