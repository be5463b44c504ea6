// qrm end to end on this machine: the qrm-host binary as the kubelet's CRI endpoint in front
// of a real containerd + runc, the three real plugins on the real topology, and the results
// read back from the containers' cgroups, from inside the containers, from pod-resources and
// from the admin service.
#include <set>
#include <thread>

#include <google/protobuf/util/message_differencer.h>
#include <unistd.h>

#include "common/cpu_set.h"
#include "common/id_list.h"
#include "testing/subprocess.h"
#include "tests/e2e/host/node_fixture.h"

namespace qrm::e2e {
namespace {

template <typename T>
std::string Describe(const StatusOr<T>& s) {
  return s.ok() ? std::string() : s.status().ToString();
}

#define REQUIRE_OK(expr)     \
  do {                       \
    const auto& r_ = (expr); \
    INFO(Describe(r_));      \
    REQUIRE(r_.ok());        \
  } while (0)

CpuSet Online() {
  auto cpus = CpuSet::Parse(TrimSysfsValue(testing::ReadFile("/sys/devices/system/cpu/online")));
  REQUIRE(cpus.ok());
  return *cpus;
}

// The container's cpuset as its cgroup and its own /proc/self/status both report it; the
// test fails if the two disagree.
std::string CpusetOf(CriClient& cri, const std::string& id) {
  auto cgroup = cri.ContainerCgroupCpus(id);
  REQUIRE(cgroup.ok());
  auto status = cri.ExecSync(id, {"cat", "/proc/self/status"});
  REQUIRE(status.ok());
  CHECK(CpusAllowedList(*status) == *cgroup);
  return *cgroup;
}

struct Started {
  Pod pod;
  std::string container;
};

StatusOr<Started> StartPod(CriClient& cri, const std::string& name, const std::string& qos) {
  auto pod = cri.RunHostNetworkPod(name, name + "-uid", "default", Qos(qos));
  if (!pod.ok()) return pod.status();
  auto id = cri.CreateAndStartContainer(*pod, OneCpu("main"));
  if (!id.ok()) {
    (void)cri.StopAndRemovePod(pod->id);
    return id.status();
  }
  return Started{*pod, *id};
}

TEST_CASE("a dedicated pod gets an exclusive CPU, a shared pod the rest of the machine") {
  if (!Root()) return;
  NodeFixture node;
  node.StartQrm({"--reclaimed-pool-size", "0"});
  CriClient shim = node.Shim();
  const CpuSet online = Online();

  auto dedicated = StartPod(shim, "dedicated", "dedicated_cores");
  REQUIRE_OK(dedicated);
  auto shared = StartPod(shim, "shared", "shared_cores");
  REQUIRE_OK(shared);

  auto d = CpuSet::Parse(CpusetOf(shim, dedicated->container));
  auto s = CpuSet::Parse(CpusetOf(shim, shared->container));
  REQUIRE(d.ok());
  REQUIRE(s.ok());
  CHECK(d->Size() == 1);
  CHECK_FALSE(d->Overlaps(*s));
  CHECK(d->Union(*s) == online);

  // Pod-resources and the admin service report exactly what the cgroups hold.
  auto listed = node.PodResources();
  REQUIRE_OK(listed);
  std::map<std::string, std::string> by_pod;
  for (const auto& p : listed->pod_resources()) {
    REQUIRE(p.containers_size() == 1);
    CpuSet cpus;
    for (int64_t id : p.containers(0).cpu_ids()) cpus.Add(static_cast<int>(id));
    by_pod[p.name()] = cpus.ToString();
  }
  CHECK(by_pod["dedicated"] == d->ToString());
  CHECK(by_pod["shared"] == s->ToString());

  // Health and metrics: ready after the resync, and the calls above are counted.
  CHECK(node.HttpGet("/healthz").first == 200);
  CHECK(node.HttpGet("/readyz").first == 200);
  auto [code, metrics] = node.HttpGet("/metrics");
  CHECK(code == 200);
  CHECK_THAT(metrics,
             Catch::Contains("qrm_cri_calls_total{method=\"CreateContainer\"} 2") &&
                 Catch::Contains("qrm_plugins_registered{state=\"healthy\"} 3") &&
                 Catch::Contains("qrm_admission_duration_seconds_count{phase=\"allocate\"") &&
                 Catch::Contains("qrm_plugin_rpc_duration_seconds_bucket{method=\"Allocate\"") &&
                 Catch::Contains("qrm_checkpoint_write_duration_seconds_count"));
  // The plugins built on the SDK expose theirs the same way.
  auto [plugin_code, plugin_metrics] = node.HttpGet("/metrics", node.cpu_metrics_port());
  CHECK(plugin_code == 200);
  CHECK_THAT(plugin_metrics,
             Catch::Contains("qrm_plugin_served_duration_seconds_count{method=\"Allocate\"} 2"));
  CHECK(node.HttpGet("/readyz", node.cpu_metrics_port()).first == 200);
}

TEST_CASE("a pool resize reaches running containers within two reconcile periods") {
  if (!Root()) return;
  NodeFixture node;
  node.StartQrm({"--reclaimed-pool-size", "1"});
  CriClient shim = node.Shim();
  auto shared = StartPod(shim, "online", "shared_cores");
  REQUIRE_OK(shared);
  auto reclaimed = StartPod(shim, "offline", "reclaimed_cores");
  REQUIRE_OK(reclaimed);
  const std::string shared_before = CpusetOf(shim, shared->container);
  const std::string reclaimed_before = CpusetOf(shim, reclaimed->container);
  CHECK(shared_before != reclaimed_before);

  // The QoS system gives the reclaimed pool back to the shared one.
  const auto start = std::chrono::steady_clock::now();
  auto set = testing::RunProcess({NodeFixture::Binary("cpu"), "--state-dir", node.File("state-cpu"),
                                  "--set-pools", "reclaimed=0"});
  INFO(set.output);
  REQUIRE(set.exit_code == 0);
  const std::string all = Online().ToString();
  REQUIRE(testing::WaitFor(
      [&] {
        auto a = shim.ContainerCgroupCpus(shared->container);
        auto b = shim.ContainerCgroupCpus(reclaimed->container);
        return a.ok() && b.ok() && *a == all && *b == all;
      },
      std::chrono::seconds(10)));
  const auto took = std::chrono::steady_clock::now() - start;
  INFO("resize reached both cgroups in "
       << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  CHECK(took <= 2 * kReconcilePeriod + std::chrono::milliseconds(500));
  CHECK(CpusetOf(shim, shared->container) == all);
  CHECK(CpusetOf(shim, reclaimed->container) == all);
}

TEST_CASE("removing a dedicated pod frees its CPU for the next one") {
  if (!Root()) return;
  NodeFixture node;
  node.StartQrm({"--reclaimed-pool-size", "0"});
  CriClient shim = node.Shim();
  const int cpus = Online().Size();
  // Every CPU but one (the shared pool's minimum) can be dedicated.
  std::vector<Started> held;
  for (int i = 0; i + 1 < cpus; ++i) {
    auto p = StartPod(shim, "d" + std::to_string(i), "dedicated_cores");
    REQUIRE_OK(p);
    held.push_back(*p);
  }
  const std::string freed = CpusetOf(shim, held.front().container);
  auto refused = StartPod(shim, "refused", "dedicated_cores");
  REQUIRE_FALSE(refused.ok());
  INFO(refused.status().ToString());
  CHECK(node.Allocations()->pods_size() == static_cast<int>(held.size()));

  REQUIRE(shim.StopAndRemovePod(held.front().pod.id).ok());
  auto next = StartPod(shim, "next", "dedicated_cores");
  REQUIRE_OK(next);
  CHECK(CpusetOf(shim, next->container) == freed);
}

TEST_CASE("qrm-host killed with SIGKILL and restarted keeps every allocation and cpuset") {
  if (!Root()) return;
  NodeFixture node;
  node.StartQrm({"--reclaimed-pool-size", "0"});
  CriClient shim = node.Shim();
  auto dedicated = StartPod(shim, "dedicated", "dedicated_cores");
  REQUIRE_OK(dedicated);
  auto shared = StartPod(shim, "shared", "shared_cores");
  REQUIRE_OK(shared);
  const std::string d = CpusetOf(shim, dedicated->container);
  const std::string s = CpusetOf(shim, shared->container);
  auto before = node.Allocations();
  REQUIRE_OK(before);

  node.KillHost();
  node.StartHost();
  REQUIRE(node.WaitPluginsHealthy(3));
  auto after = node.Allocations();
  REQUIRE_OK(after);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(*after, *before));
  // Let a few reconcile periods pass: nothing may move.
  std::this_thread::sleep_for(3 * kReconcilePeriod);
  CHECK(CpusetOf(shim, dedicated->container) == d);
  CHECK(CpusetOf(shim, shared->container) == s);
  // The restarted shim knows the running containers: removing one releases it.
  REQUIRE(shim.StopAndRemovePod(dedicated->pod.id).ok());
  REQUIRE(testing::WaitFor([&] {
    auto a = node.Allocations();
    return a.ok() && a->pods_size() == 1;
  }));
}

}  // namespace
}  // namespace qrm::e2e
