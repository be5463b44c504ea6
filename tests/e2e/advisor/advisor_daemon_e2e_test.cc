// qrm-advisor end to end on this machine: a private containerd + runc, qrm-host and the real
// plugins (tests/e2e/host/node_fixture.h), and the qrm-advisor binary sampling the containers'
// real cgroups, answering over its socket, sizing the CPU plugin's pools through the pool
// control file and keeping its models across a restart.
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include "api/advisor_v1.grpc.pb.h"
#include "common/cpu_set.h"
#include "common/id_list.h"
#include "tests/e2e/advisor/advisor_fixture.h"

namespace qrm::e2e {
namespace {

namespace av = ::qrm::advisor::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

std::optional<av::GetPredictionResponse> Prediction(av::Advisor::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
  av::GetPredictionResponse r;
  if (!stub.GetPrediction(&ctx, {}, &r).ok()) return std::nullopt;
  return r;
}

const av::ContainerUsage* FindContainer(const av::GetUsageResponse& r, const std::string& pod,
                                        const std::string& container) {
  for (const av::PodUsage& p : r.pods()) {
    if (p.name() != pod) continue;
    for (const av::ContainerUsage& c : p.containers()) {
      if (c.name() == container) return &c;
    }
  }
  return nullptr;
}

// The container's cpuacct cgroup as the container's own /proc/self/cgroup names it (cgroup
// v1 without a cgroup namespace: host paths).
std::string CpuacctPathFromInside(CriClient& cri, const std::string& id) {
  auto text = cri.ExecSync(id, {"cat", "/proc/self/cgroup"});
  REQUIRE(text.ok());
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    if (controllers.find("cpuacct") != std::string::npos) return line.substr(second + 1);
  }
  FAIL("no cpuacct line in /proc/self/cgroup: " << *text);
  return "";
}

// Cores used over about a second, from the cgroup's own counter.
double CoresFromCounter(const std::string& cpuacct_path) {
  const std::string file = "/sys/fs/cgroup/cpuacct" + cpuacct_path + "/cpuacct.usage";
  const auto t0 = Clock::now();
  const double u0 = std::stod(testing::ReadFile(file));
  std::this_thread::sleep_for(seconds(1));
  const double u1 = std::stod(testing::ReadFile(file));
  const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  return (u1 - u0) / 1e9 / dt;
}

TEST_CASE(
    "qrm-advisor samples a spinning container at one core within 3 s and an idle one near 0") {
  if (!Root("advisor e2e")) return;
  NodeFixture node;
  node.StartQrm({"--reclaimed-pool-size", "0"});
  auto advisor = StartAdvisor(node, {"--pool-control-file", "", "--step", "5s"});
  auto stub = AdvisorStub(node);
  REQUIRE(WaitSlowly([&] { return Usage(*stub).has_value(); }, seconds(20)));
  CriClient shim = node.Shim();
  auto idle_pod = shim.RunHostNetworkPod("idle", "idle-uid", "default", Qos("shared_cores"));
  REQUIRE(idle_pod.ok());
  REQUIRE(shim.CreateAndStartContainer(*idle_pod, OneCpu("main")).ok());
  auto pod = shim.RunHostNetworkPod("spin", "spin-uid", "default", Qos("shared_cores"));
  REQUIRE(pod.ok());
  auto id = shim.CreateAndStartContainer(*pod, Spinner("main"));
  REQUIRE(id.ok());
  const auto started = Clock::now();

  double sampled = -1;
  std::string history;  // what the advisor said, when
  const bool seen = WaitSlowly(
      [&] {
        auto r = Usage(*stub);
        const av::ContainerUsage* c = r ? FindContainer(*r, "spin", "main") : nullptr;
        if (c == nullptr || c->cpu().samples() == 0) return false;
        if (c->cpu().latest() != sampled) {
          history += fmt::format("{:.2f}s: {:.3f} cores\n",
                                 std::chrono::duration<double>(Clock::now() - started).count(),
                                 c->cpu().latest());
        }
        sampled = c->cpu().latest();
        return sampled >= 0.9 && sampled <= 1.1;
      },
      seconds(10));
  const double took = std::chrono::duration<double>(Clock::now() - started).count();
  INFO("advisor: " << sampled << " cores, " << took << " s after the start\n"
                   << history << testing::ReadFile(node.File("qrm-advisor.log")));
  REQUIRE(seen);
  CHECK(took <= 3.0);

  // The advisor's cgroup is the container's own, and its counter agrees.
  auto r = Usage(*stub);
  REQUIRE(r.has_value());
  const av::ContainerUsage* spin = FindContainer(*r, "spin", "main");
  REQUIRE(spin != nullptr);
  CHECK(spin->cgroup() == CpuacctPathFromInside(shim, *id));
  const double counter = CoresFromCounter(spin->cgroup());
  CHECK(counter == Approx(1.0).margin(0.1));
  r = Usage(*stub);
  REQUIRE(r.has_value());
  CHECK(FindContainer(*r, "spin", "main")->cpu().latest() == Approx(counter).margin(0.1));
  const av::ContainerUsage* idle = FindContainer(*r, "idle", "main");
  REQUIRE(idle != nullptr);
  CHECK(idle->cpu().samples() > 0);
  CHECK(idle->cpu().latest() < 0.05);
  CHECK(idle->memory().latest() > 0);
  CHECK(r->node().cpu().latest() >= 0.9);
}

// The pool sizes the allocations show: the CPUs of the shared and the reclaimed container.
struct Cpusets {
  std::string shared, reclaimed;
};

Cpusets Read(CriClient& cri, const std::string& shared_id, const std::string& reclaimed_id) {
  auto a = cri.ContainerCgroupCpus(shared_id);
  auto b = cri.ContainerCgroupCpus(reclaimed_id);
  return {a.ok() ? *a : "", b.ok() ? *b : ""};
}

int Count(const std::string& cpus) {
  auto set = CpuSet::Parse(cpus);
  return set.ok() ? set->Size() : -1;
}

TEST_CASE("a burning shared container grows the shared pool until it stops burning") {
  if (!Root("advisor e2e")) return;
  NodeFixture node;
  const int cpus =
      CpuSet::Parse(TrimSysfsValue(testing::ReadFile("/sys/devices/system/cpu/online")))->Size();
  REQUIRE(cpus >= 2);
  // Shared starts with one CPU, reclaimed with the rest.
  node.StartQrm({"--reclaimed-pool-size", std::to_string(cpus - 1)});
  CriClient shim = node.Shim();
  auto online = shim.RunHostNetworkPod("online", "online-uid", "default", Qos("shared_cores"));
  REQUIRE(online.ok());
  auto shared_id = shim.CreateAndStartContainer(*online, OneCpu("main"));
  REQUIRE(shared_id.ok());
  auto offline =
      shim.RunHostNetworkPod("offline", "offline-uid", "default", Qos("reclaimed_cores"));
  REQUIRE(offline.ok());
  auto reclaimed_id = shim.CreateAndStartContainer(*offline, OneCpu("main"));
  REQUIRE(reclaimed_id.ok());
  const Cpusets before = Read(shim, *shared_id, *reclaimed_id);
  REQUIRE(Count(before.shared) == 1);
  REQUIRE(Count(before.reclaimed) == cpus - 1);

  auto advisor = StartAdvisor(
      node, {"--pool-control-file", node.PluginStateDir("cpu") + "/pools.json", "--pool-model",
             "none", "--min-shared-cpus", "1", "--min-reclaimed-cpus", "0", "--pool-period", "1s",
             "--pool-shrink-interval", "6s", "--step", "5s"});
  auto stub = AdvisorStub(node);
  auto logs = [&] { return testing::ReadFile(node.File("qrm-advisor.log")) + node.Logs(); };
  // Idle: the advisor keeps the pools as they are.
  REQUIRE(WaitSlowly(
      [&] {
        auto p = Prediction(*stub);
        return p && p->pool().decided_unix() > 0;
      },
      seconds(20)));
  std::this_thread::sleep_for(seconds(2));
  CHECK(Read(shim, *shared_id, *reclaimed_id).shared == before.shared);

  // A shared container starts burning one core: 1.25 cores needed, the shared pool takes 2.
  auto burner = shim.CreateAndStartContainer(*online, Spinner("burner"));
  REQUIRE(burner.ok());
  const auto burn_start = Clock::now();
  Cpusets grown;
  const bool grew = WaitSlowly(
      [&] {
        grown = Read(shim, *shared_id, *reclaimed_id);
        return Count(grown.shared) == 2;
      },
      seconds(15));
  INFO(logs());
  REQUIRE(grew);
  INFO("grew after " << std::chrono::duration<double>(Clock::now() - burn_start).count() << " s");
  if (cpus >= 3) {
    CHECK(Count(grown.reclaimed) == cpus - 2);  // the reclaimed containers' cpuset shrank
  } else {
    // Two CPUs: the reclaimed pool is empty and its containers share the shared pool (the
    // plugin's rule); nothing smaller than one CPU exists to shrink to.
    CHECK(grown.reclaimed == grown.shared);
  }
  auto pools = testing::ReadFile(node.PluginStateDir("cpu") + "/pools.json");
  CHECK(pools == (cpus == 2 ? "{\"reclaimed\":0}\n" : "{\"shared\":2}\n"));

  // The burner stops: the pool returns, no sooner than the shrink interval after growing.
  REQUIRE(shim.StopAndRemoveContainer(*burner).ok());
  const auto stopped = Clock::now();
  const bool returned = WaitSlowly(
      [&] { return Read(shim, *shared_id, *reclaimed_id).shared == before.shared; }, seconds(30));
  REQUIRE(returned);
  const double after = std::chrono::duration<double>(Clock::now() - stopped).count();
  INFO("returned " << after << " s after the burner stopped");
  CHECK(Read(shim, *shared_id, *reclaimed_id).reclaimed == before.reclaimed);
  CHECK(std::chrono::duration<double>(Clock::now() - burn_start).count() >= 6.0);
}

TEST_CASE("a restarted qrm-advisor predicts from the histograms it had") {
  if (!Root("advisor e2e")) return;
  NodeFixture node;
  node.StartQrm({"--reclaimed-pool-size", "0"});
  const std::vector<std::string> flags = {"--pool-control-file",   "",  "--step", "2s",
                                          "--checkpoint-interval", "0s"};
  auto advisor = StartAdvisor(node, flags);
  auto stub = AdvisorStub(node);
  std::optional<av::GetPredictionResponse> before;
  // The first advisor observes a step every 2 s and checkpoints at every tick.
  REQUIRE(WaitSlowly(
      [&] {
        before = Prediction(*stub);
        return before && before->resources(0).known() && before->resources(0).steps_observed() >= 3;
      },
      seconds(30)));
  const double cpu_peak = before->resources(0).peak();
  const double memory_peak = before->resources(1).peak();
  REQUIRE(advisor->Kill(SIGTERM) == 0);  // checkpoints at exit
  advisor.reset();
  // The new advisor's step is long, so what it predicts at first is its restored models'.
  std::vector<std::string> restart = flags;
  restart[3] = "60s";  // --step
  advisor = StartAdvisor(node, restart);
  stub = AdvisorStub(node);
  std::optional<av::GetPredictionResponse> after;
  REQUIRE(WaitSlowly(
      [&] {
        after = Prediction(*stub);
        return after.has_value() && after->resources(0).predicted_unix() > 0;
      },
      seconds(20)));
  INFO(testing::ReadFile(node.File("qrm-advisor.log")));
  REQUIRE(after->resources(0).steps_observed() == 0);
  CHECK(after->resources(0).known());
  CHECK(after->resources(0).peak() == Approx(cpu_peak).epsilon(1e-9));
  CHECK(after->resources(1).known());
  CHECK(after->resources(1).peak() == Approx(memory_peak).epsilon(1e-9));
}

}  // namespace
}  // namespace qrm::e2e
