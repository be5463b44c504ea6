// guard_latency_bench: the watermark guard end to end on this machine (root; a private
// containerd + runc, qrm-host, the CPU, memory and NIC plugins and qrm-advisor as processes).
//
//   P13 <s> s   a spinning reclaimed_cores pod starts and takes the node over the watermark,
//               to its throttle visible in its cgroup's cpu.cfs_quota_us; median of --runs
//               (5), sampling every 1 s (target <= 2 s)
//   P13_after_breach <s> s   the same from the first node sample above the watermark (as
//               qrm-advisor's GetUsage reports it): the guard's own share
//
// Each run starts a new pod and removes it after the throttle was seen (qrm-host forgets its
// throttle with the pod). The watermark is the idle node's usage + 0.5 core, so the spinner
// (1 core) crosses it alone and one throttle closes the gap.
//
// Flags: --only ID (repeatable), --runs N (5).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/advisor_v1.grpc.pb.h"
#include "bench/scale/bench_args.h"
#include "testing/child_process.h"
#include "testing/e2e/containerd.h"
#include "testing/temp_dir.h"

namespace {

using qrm::bench::BenchArgs;
using qrm::testing::ChildProcess;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;
namespace av = ::qrm::advisor::v1;

struct Node {
  qrm::testing::TempDir dir;
  std::unique_ptr<qrm::e2e::Containerd> containerd;
  std::vector<std::unique_ptr<ChildProcess>> processes;

  std::string File(const std::string& name) const { return dir.File(name); }
  void Run(std::vector<std::string> argv, const std::string& log) {
    processes.push_back(std::make_unique<ChildProcess>(std::move(argv), File(log)));
  }
  void StartQrm() {
    ::mkdir(File("plugins").c_str(), 0750);
    for (const auto& [which, binary] :
         {std::pair{"cpu", QRM_CPU_PLUGIN}, std::pair{"memory", QRM_MEMORY_PLUGIN},
          std::pair{"nic", QRM_NIC_PLUGIN}}) {
      std::vector<std::string> argv = {binary, "--plugin-dir", File("plugins"), "--state-dir",
                                       File(std::string("state-") + which)};
      if (std::string(which) == "cpu") argv.insert(argv.end(), {"--reclaimed-pool-size", "0"});
      if (std::string(which) == "nic") {
        argv.insert(argv.end(), {"--include-virtual", "--unknown-nic-speed-mbps", "10000"});
      }
      Run(argv, std::string(which) + ".log");
    }
    Run({QRM_HOST, "--cri-socket", File("cri.sock"), "--runtime-endpoint",
         "unix://" + containerd->socket(), "--plugin-dir", File("plugins"), "--state-dir",
         File("state-host"), "--reconcile-period", "1s", "--pod-resources-socket",
         File("pod-resources.sock"), "--admin-socket", File("admin.sock"), "--metrics-address", "",
         "--always-consult", "qrm.io/nic"},
        "qrm-host.log");
  }
  void StartAdvisor(const std::string& policy) {
    Run({QRM_ADVISOR, "--runtime-endpoint", "unix://" + containerd->socket(), "--admin-socket",
         File("admin.sock"), "--socket", File("advisor.sock"), "--state-dir", "",
         "--metrics-address", "", "--inventory-period", "1s", "--pool-control-file", "",
         "--guard-policy", policy},
        "qrm-advisor.log");
  }
  qrm::e2e::CriClient Shim() const {
    return qrm::e2e::CriClient(File("cri.sock"), containerd->ClientOptions());
  }
};

// The node's latest CPU sample and its time, from qrm-advisor.
std::optional<std::pair<double, int64_t>> NodeCpu(const std::string& socket) {
  auto stub = av::Advisor::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
  av::GetUsageResponse r;
  if (!stub->GetUsage(&ctx, {}, &r).ok() || r.node().cpu().samples() == 0) return std::nullopt;
  return std::pair{r.node().cpu().latest(), r.status().last_sample_unix()};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct RunTimes {
  double from_start = 0, from_breach = 0;
};

// One run: a new spinning pod; the seconds until its quota shows in its cgroup.
std::optional<RunTimes> OneRun(Node& node, int run, double watermark) {
  qrm::e2e::CriClient shim = node.Shim();
  const std::string name = fmt::format("burn-{}", run);
  std::map<std::string, std::string> qos = {{"katalyst.kubewharf.io/qos_level", "reclaimed_cores"}};
  auto pod = shim.RunHostNetworkPod(name, name + "-uid", "default", qos);
  if (!pod.ok()) return std::nullopt;
  qrm::e2e::ContainerSpec spec;
  spec.name = "main";
  spec.command = {"sh", "-c", "while :; do :; done"};
  auto id = shim.CreateAndStartContainer(*pod, spec);
  const auto start = Clock::now();
  if (!id.ok()) return std::nullopt;
  std::optional<Clock::time_point> breach;
  std::optional<RunTimes> out;
  while (Clock::now() - start < seconds(30)) {
    if (!breach) {
      auto cpu = NodeCpu(node.File("advisor.sock"));
      if (cpu && cpu->first > watermark) breach = Clock::now();
    }
    if (auto quota = shim.ContainerCgroupCpuQuota(*id); quota.ok() && *quota > 0) {
      const auto seen = Clock::now();
      out = RunTimes{std::chrono::duration<double>(seen - start).count(),
                     std::chrono::duration<double>(seen - breach.value_or(seen)).count()};
      break;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  (void)shim.StopAndRemovePod(pod->id);
  std::this_thread::sleep_for(seconds(4));  // the node settles; qrm-host collects the pod
  return out;
}

int RunP13(const BenchArgs& args) {
  Node node;
  auto c = qrm::e2e::Containerd::Start();
  if (!c.ok()) {
    std::fprintf(stderr, "P13: containerd: %s\n", c.status().ToString().c_str());
    return 1;
  }
  node.containerd = std::move(*c);
  node.StartQrm();
  const std::string policy = node.File("guard.json");
  std::ofstream(policy) << R"({"objectiveEnsurances": [{"name": "cpu", "metricRule":
      {"name": "cpu_total_usage", "value": 64}, "actionName": "throttle"}],
      "throttle": {"belowRequest": true}})";
  node.StartAdvisor(policy);
  std::this_thread::sleep_for(seconds(8));  // registration, first samples
  double idle = 0;
  for (int i = 0; i < 3; ++i, std::this_thread::sleep_for(seconds(1))) {
    idle += NodeCpu(node.File("advisor.sock")).value_or(std::pair{0.0, 0}).first / 3;
  }
  const double watermark = idle + 0.5;
  std::ofstream(policy) << fmt::format(
      R"({{"objectiveEnsurances": [{{"name": "cpu", "metricRule":
      {{"name": "cpu_total_usage", "value": {:.3f}}}, "actionName": "throttle"}}],
      "throttle": {{"belowRequest": true}}}})",
      watermark);
  std::this_thread::sleep_for(seconds(2));  // reloaded
  std::vector<double> from_start, from_breach;
  for (int run = 0; run < args.Int("runs"); ++run) {
    auto t = OneRun(node, run, watermark);
    if (!t) {
      std::fprintf(stderr, "P13: run %d: no throttle within 30 s (logs in %s)\n", run,
                   node.dir.path().c_str());
      return 1;
    }
    std::printf("# P13 run %d: %.2f s from the start, %.2f s from the breach\n", run, t->from_start,
                t->from_breach);
    from_start.push_back(t->from_start);
    from_breach.push_back(t->from_breach);
  }
  std::printf("# P13 idle node %.3f cores, watermark %.3f cores, sampling 1 s\n", idle, watermark);
  if (args.Selected("P13")) {
    std::printf("P13 %.2f s (target <= 2 s)\n", Median(from_start));
    std::printf("P13_after_breach %.2f s\n", Median(from_breach));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args({{"runs", 5}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "guard_latency_bench: %s\n", error.c_str());
    return 2;
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "guard_latency_bench: P13 needs root (containerd, cgroups)\n");
    return 1;
  }
  if (!args.Selected("P13")) return 0;
  return RunP13(args);
}
