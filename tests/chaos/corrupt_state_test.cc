// Corrupted state: host and plugin checkpoints truncated, bit-flipped, emptied or of a
// wrong version while qrm is down. Every case must be detected, the file moved aside, the
// process must start and say so in one log line and a metric, and the state must be
// rebuilt from the plugins and the runtime with every container keeping its cpuset.
#include "tests/chaos/chaos_env.h"
#include "tests/chaos/invariants.h"
#include "tests/chaos/state_files.h"

namespace qrm::chaos {
namespace {

using std::chrono::milliseconds;

struct RunningPod {
  e2e::Pod pod;
  std::string uid, container, cpus;
};

RunningPod Run(e2e::CriClient& shim, e2e::CriClient& direct, const std::string& name,
               const std::string& qos) {
  auto pod = shim.RunHostNetworkPod(name, name + "-uid", "chaos", e2e::Qos(qos));
  REQUIRE(pod.ok());
  auto id = shim.CreateAndStartContainer(*pod, e2e::OneCpu("main"));
  INFO(id.status().ToString());
  REQUIRE(id.ok());
  auto cpus = direct.ContainerCgroupCpus(*id);
  REQUIRE(cpus.ok());
  return {*pod, name + "-uid", *id, *cpus};
}

// The admin service's cpuset for the pod's "main" container, or "" if it has none.
std::string AllocatedCpus(e2e::NodeFixture& node, const std::string& uid) {
  auto allocations = node.Allocations();
  REQUIRE(allocations.ok());
  for (const auto& p : allocations->pods()) {
    if (p.uid() != uid) continue;
    for (const auto& c : p.containers()) {
      if (c.name() == "main") return c.cpuset_cpus();
    }
  }
  return "";
}

void CheckRebuilt(e2e::NodeFixture& node, e2e::CriClient& direct,
                  const std::vector<RunningPod>& pods) {
  std::vector<std::string> violations;
  const bool consistent =
      WaitConsistent(node, direct, 3 * e2e::kReconcilePeriod + milliseconds(3000), &violations);
  if (!consistent) UNSCOPED_INFO(Join(violations) << node.Logs());
  CHECK(consistent);
  for (const RunningPod& p : pods) {
    INFO(p.uid);
    auto cpus = direct.ContainerCgroupCpus(p.container);
    REQUIRE(cpus.ok());
    CHECK(*cpus == p.cpus);  // the container kept its CPUs
    CHECK(AllocatedCpus(node, p.uid) == p.cpus);
  }
}

Damage AnyDamage() {
  return GENERATE(Damage::kTruncated, Damage::kBitFlipped, Damage::kEmpty, Damage::kWrongVersion);
}

TEST_CASE("a damaged host checkpoint is moved aside, reported and rebuilt") {
  if (!Root()) return;
  const Damage damage = AnyDamage();
  INFO("damage: " << DamageName(damage));
  e2e::NodeFixture node;
  StartNode(node);
  e2e::CriClient shim = node.Shim();
  e2e::CriClient direct = node.Direct();
  const std::vector<RunningPod> pods = {Run(shim, direct, "dedicated", "dedicated_cores"),
                                        Run(shim, direct, "shared", "shared_cores")};

  // A clean stop compacts: the pods are in their files and the journal is empty, so the pod
  // of the damaged file is rebuilt from the plugins. (A damaged file whose pod the journal
  // still holds comes back from the record: tests/unit/qrm/state/state_journal_test.cc.)
  node.StopHost();
  const std::string dir = node.HostStateDir() + "/pods";
  DamageFile(dir + "/" + pods[0].uid + ".json", damage);
  node.StartHost(HostFlags());  // starts despite the damage
  REQUIRE(node.WaitReady());

  CHECK(MovedAside(dir).size() == 1);
  CHECK(CountLines(node.HostLog(), "host checkpoint: corrupt pod file(s) were moved aside") == 1);
  auto [code, metrics] = node.HttpGet("/metrics");
  CHECK(code == 200);
  CHECK_THAT(metrics, Catch::Contains("qrm_checkpoint_corrupt_total{file=\"host\"} 1"));
  CheckRebuilt(node, direct, pods);
  CHECK(CountLines(node.HostLog(), "resource allocation(s) the plugins hold") >= 1);
}

TEST_CASE("a damaged plugin checkpoint is moved aside, reported and rebuilt") {
  if (!Root()) return;
  const std::string which = GENERATE(as<std::string>(), "cpu", "memory", "nic");
  const Damage damage = which == "cpu" ? AnyDamage() : Damage::kBitFlipped;
  INFO("plugin " << which << ", damage: " << DamageName(damage));
  e2e::NodeFixture node;
  StartNode(node);
  e2e::CriClient shim = node.Shim();
  e2e::CriClient direct = node.Direct();
  const std::vector<RunningPod> pods = {Run(shim, direct, "dedicated", "dedicated_cores"),
                                        Run(shim, direct, "shared", "shared_cores")};

  node.KillPlugin(which);
  const std::string dir = node.PluginStateDir(which);
  const auto files = FilesIn(dir);
  REQUIRE_FALSE(files.empty());
  for (const std::string& name : files) DamageFile(dir + "/" + name, damage);
  StartPlugin(node, which);
  // The killed plugin's endpoint may still look healthy for a moment: wait for the new
  // process to have dealt with its state file.
  CHECK(testing::WaitFor([&] { return MovedAside(dir).size() == files.size(); },
                         std::chrono::seconds(10)));
  REQUIRE(node.WaitPluginsHealthy(3));  // it started despite the damage

  CHECK(MovedAside(dir).size() == files.size());
  const std::string log = testing::ReadFile(node.File(which + ".log"));
  CHECK(CountLines(log, dir) >= 1);  // says which file it moved aside
  if (which == "cpu") {
    // The new process moves the file aside before it serves: wait for its HTTP endpoint.
    std::pair<int, std::string> got;
    testing::WaitFor([&] {
      got = node.HttpGet("/metrics", node.cpu_metrics_port());
      return got.first == 200;
    });
    const auto& [code, metrics] = got;
    CHECK(code == 200);
    CHECK_THAT(metrics, Catch::Contains("qrm_checkpoint_corrupt_total"));
  }
  CheckRebuilt(node, direct, pods);
}

}  // namespace
}  // namespace qrm::chaos
