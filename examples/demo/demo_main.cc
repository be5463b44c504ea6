// qrm-demo: qrm on this machine in two minutes, with nothing installed system-wide.
//
// It starts a private containerd (own temp root and sockets, never the system's), the
// qrm-host binary in front of it and the CPU, memory and NIC plugins on the real topology,
// then plays the kubelet: creates pods of different QoS levels through qrm's CRI socket,
// shows what each got (pod-resources, the container's cgroup and its own view), draws the
// machine, starts qrm-advisor and lets a busy container grow the shared pool (and shrink the
// reclaimed one) and give it back, shows what the advisor publishes to the cluster and how
// qrm-scheduler-extender answers kube-scheduler from it, compares qrm-drain-planner's plan for
// a recorded cluster with the Cluster Autoscaler's NUMA-blind one, lets the watermark guard
// throttle a busy batch container over a CPU watermark and restore it, resizes the reclaimed
// pool by hand and shows the running containers follow, adds a dedicated NUMA-bound pod, and
// cleans everything up (also on Ctrl-C).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/podresources_v1.grpc.pb.h"
#include "common/cpu_set.h"
#include "common/log.h"
#include "examples/demo/cluster_view.h"
#include "testing/child_process.h"
#include "testing/e2e/containerd.h"
#include "testing/e2e/cri_client.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace {

using qrm::e2e::ContainerSpec;
using qrm::e2e::CriClient;
using qrm::e2e::Pod;
using qrm::testing::ChildProcess;

volatile sig_atomic_t g_interrupted = 0;

void Step(const std::string& text) {
  std::printf("\n\033[1m== %s\033[0m\n", text.c_str());
}

struct DemoPod {
  std::string name, qos, numa_binding;
  Pod pod;
  std::string container;
};

class Demo {
 public:
  Demo() : dir_(std::make_unique<qrm::testing::TempDir>()) {}

  int Run() {
    Step("starting a private containerd (its own root, state and sockets)");
    auto c = qrm::e2e::Containerd::Start();
    if (!c.ok()) return Fail("containerd: " + c.status().ToString());
    containerd_ = std::move(*c);
    std::printf("containerd %s serving on %s (snapshotter %s)\n", "1.6",
                containerd_->socket().c_str(), containerd_->snapshotter().c_str());
    if (Interrupted()) return 130;

    Step("starting qrm-host (CRI shim) and the CPU, memory and NIC plugins");
    ::mkdir(File("plugins").c_str(), 0750);
    Spawn("cpu", {QRM_CPU_PLUGIN, "--plugin-dir", File("plugins"), "--state-dir", File("cpu"),
                  "--reclaimed-pool-size", "1"});
    Spawn("memory",
          {QRM_MEMORY_PLUGIN, "--plugin-dir", File("plugins"), "--state-dir", File("memory")});
    Spawn("nic", {QRM_NIC_PLUGIN, "--plugin-dir", File("plugins"), "--state-dir", File("nic"),
                  "--include-virtual", "--unknown-nic-speed-mbps", "10000"});
    Spawn("qrm-host",
          {QRM_HOST, "--cri-socket", File("cri.sock"), "--runtime-endpoint",
           "unix://" + containerd_->socket(), "--plugin-dir", File("plugins"), "--state-dir",
           File("host"), "--reconcile-period", "1s", "--pod-resources-socket",
           File("pod-resources.sock"), "--admin-socket", File("admin.sock"), "--metrics-address",
           "127.0.0.1:0", "--always-consult", "qrm.io/nic"});
    if (!WaitPlugins()) return Fail("the plugins did not register; logs in " + dir_->path());
    std::printf("%s", Ctl({"plugins"}).c_str());
    if (Interrupted()) return 130;

    Step("creating pods through qrm's CRI socket, as the kubelet would");
    shim_ = std::make_unique<CriClient>(File("cri.sock"), containerd_->ClientOptions());
    if (!Create("web", "shared_cores", "") || !Create("batch", "reclaimed_cores", "")) {
      return Fail("creating pods failed");
    }
    Report();
    std::printf("\n%s", Ctl({"topology"}).c_str());
    if (Interrupted()) return 130;

    Step("qrm-advisor: a busy shared container grows the shared pool, then gives it back");
    cluster_ = std::make_unique<qrm::demo::ClusterView>(dir_->path());
    if (!AdvisorFollowsLoad()) return Fail("the advisor did not resize the pools");
    if (Interrupted()) return 130;

    Step(
        "the cluster's view: qrm-advisor publishes this node's NodeMetric, NodeResourceTopology "
        "and plugin resources to an API server (one inside the demo: no control plane here); "
        "qrm-scheduler-extender places pods by them");
    if (!cluster_->Show(QRM_EXTENDER)) return Fail("the cluster view failed");
    children_.erase("qrm-advisor");  // the next steps size the pools by hand
    cluster_.reset();
    if (Interrupted()) return 130;

    Step(
        "qrm-drain-planner: which nodes of a recorded four-node cluster (kubectl get -o json) "
        "can drain now, as the Cluster Autoscaler plans it and with the kubelets' NUMA "
        "admission");
    if (!ShowDrainPlans()) return Fail("the drain planner failed");
    if (Interrupted()) return 130;

    Step(
        "the watermark guard: a busy batch pod takes the node over a CPU watermark; qrm-host "
        "throttles it, then restores it");
    if (!GuardThrottlesAndRestores()) return Fail("the guard did not throttle and restore");
    if (Interrupted()) return 130;

    Step("resizing the reclaimed pool to 0 CPUs (qrm-cpu-plugin --set-pools reclaimed=0)");
    Resize("reclaimed=0");
    if (Interrupted()) return 130;

    Step("a dedicated, NUMA-bound pod takes an exclusive CPU; the pools shrink around it");
    if (!Create("db", "dedicated_cores", R"({"numa_binding":"true"})")) {
      return Fail("creating the dedicated pod failed");
    }
    WaitSettled();
    Report();
    std::printf("\n%s", Ctl({"topology"}).c_str());
    std::printf("\n%s", Ctl({"allocations"}).c_str());
    Step("done: removing every pod, stopping qrm and containerd");
    return 0;
  }

  ~Demo() {
    if (shim_) {
      for (auto& p : pods_) (void)shim_->StopAndRemovePod(p.pod.id);
    }
    children_.clear();  // SIGTERM, then wait
    if (containerd_) containerd_->Stop();
  }

 private:
  std::string File(const std::string& name) const { return dir_->File(name); }
  static bool Interrupted() { return g_interrupted != 0; }

  int Fail(const std::string& what) {
    std::fprintf(stderr, "qrm-demo: %s\n", what.c_str());
    for (const auto& [name, _] : children_) {
      std::string log = qrm::testing::ReadFile(File(name + ".log"));
      if (log.size() > 3000) log = log.substr(log.size() - 3000);
      std::fprintf(stderr, "--- %s.log (tail)\n%s", name.c_str(), log.c_str());
    }
    return 1;
  }

  void Spawn(const std::string& name, std::vector<std::string> argv) {
    children_[name] = std::make_unique<ChildProcess>(std::move(argv), File(name + ".log"));
  }

  // The docs/drain.md worked example: CA's NUMA-blind plan sends a NUMA-bound pod to a node
  // whose kubelet would refuse it; qrm's plan sends it where it fits. Prints the comparison.
  static bool ShowDrainPlans() {
    const std::string fixtures = QRM_DRAIN_FIXTURES;
    const qrm::testing::ProcessResult plan = qrm::testing::RunProcess(
        {QRM_DRAIN_PLANNER, "plan", "--compare", "--max-drain-parallelism", "5", "--now",
         "2026-11-27T00:00:00Z", "--input", fixtures + "/strand-cluster.json", "--input",
         fixtures + "/strand-nrt.json"});
    const size_t comparison = plan.output.find("Comparison of the two plans");
    if (plan.exit_code != 0 || comparison == std::string::npos) {
      std::printf("%s", plan.output.c_str());
      return false;
    }
    std::printf(
        "src-1 and src-2 each run a 6-CPU NUMA-bound pod; dst-split has 10 CPUs free, 5 per "
        "NUMA node;\ndst-whole has 16 free on NUMA node 0 (docs/drain.md, \"Worked "
        "example\").\n%s",
        plan.output.substr(comparison).c_str());
    return true;
  }

  std::string Ctl(std::vector<std::string> args) {
    std::vector<std::string> argv = {QRMCTL, "--admin-socket", File("admin.sock"), "--color",
                                     ::isatty(STDOUT_FILENO) ? "always" : "never"};
    argv.insert(argv.end(), args.begin(), args.end());
    return qrm::testing::RunProcess(argv).output;
  }

  bool WaitPlugins() {
    return qrm::testing::WaitFor(
        [&] {
          std::string out = Ctl({"plugins"});
          size_t healthy = 0;
          for (size_t at = out.find("healthy"); at != std::string::npos;
               at = out.find("healthy", at + 1)) {
            ++healthy;
          }
          return healthy == 3;
        },
        std::chrono::seconds(60));
  }

  bool Create(const std::string& name, const std::string& qos, const std::string& enhancement) {
    std::map<std::string, std::string> annotations = {{"katalyst.kubewharf.io/qos_level", qos}};
    if (!enhancement.empty()) {
      annotations["katalyst.kubewharf.io/memory_enhancement"] = enhancement;
    }
    auto pod = shim_->RunHostNetworkPod(name, name + "-0000-4000-8000-demo", "demo", annotations);
    if (!pod.ok()) {
      std::fprintf(stderr, "RunPodSandbox %s: %s\n", name.c_str(), pod.status().ToString().c_str());
      return false;
    }
    ContainerSpec spec;
    spec.name = "main";
    spec.cpu_shares = 1024;  // one CPU, encoded the way the kubelet does
    spec.cpu_period = 100000;
    spec.cpu_quota = 100000;
    spec.memory_limit_in_bytes = 64LL << 20;
    auto id = shim_->CreateAndStartContainer(*pod, spec);
    if (!id.ok()) {
      std::fprintf(stderr, "CreateContainer %s: %s\n", name.c_str(),
                   id.status().ToString().c_str());
      return false;
    }
    pods_.push_back({name, qos, enhancement, *pod, *id});
    std::printf("created pod %-6s %-16s %s\n", name.c_str(), qos.c_str(),
                enhancement.empty() ? "" : ("memory_enhancement " + enhancement).c_str());
    return true;
  }

  std::map<std::string, std::string> PodResourcesCpus() {
    auto stub = ::v1::PodResourcesLister::NewStub(grpc::CreateChannel(
        "unix:" + File("pod-resources.sock"), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ::v1::ListPodResourcesResponse r;
    std::map<std::string, std::string> out;
    if (!stub->List(&ctx, {}, &r).ok()) return out;
    for (const auto& p : r.pod_resources()) {
      qrm::CpuSet cpus;
      for (const auto& c : p.containers()) {
        for (int64_t id : c.cpu_ids()) cpus.Add(static_cast<int>(id));
      }
      out[p.name()] = cpus.ToString();
    }
    return out;
  }

  void Report() {
    auto listed = PodResourcesCpus();
    std::printf("\n%-6s %-16s %-22s %-20s %s\n", "POD", "QOS", "pod-resources cpu_ids",
                "cgroup cpuset.cpus", "inside: Cpus_allowed_list");
    for (const auto& p : pods_) {
      auto cgroup = shim_->ContainerCgroupCpus(p.container);
      auto status = shim_->ExecSync(p.container, {"cat", "/proc/self/status"});
      const std::string inside = status.ok() ? qrm::e2e::CpusAllowedList(*status) : "?";
      const std::string cg = cgroup.ok() ? *cgroup : "?";
      const bool agree = cg == inside && cg == listed[p.name];
      std::printf("%-6s %-16s %-22s %-20s %-12s %s\n", p.name.c_str(), p.qos.c_str(),
                  listed[p.name].c_str(), cg.c_str(), inside.c_str(), agree ? "agree" : "DISAGREE");
    }
  }

  void Resize(const std::string& sizes) {
    std::map<std::string, std::string> before;
    for (const auto& p : pods_) before[p.name] = *shim_->ContainerCgroupCpus(p.container);
    auto set = qrm::testing::RunProcess(
        {QRM_CPU_PLUGIN, "--state-dir", File("cpu"), "--set-pools", sizes});
    std::printf("%s", set.output.c_str());
    const auto start = std::chrono::steady_clock::now();
    std::map<std::string, double> moved_after;
    qrm::testing::WaitFor(
        [&] {
          for (const auto& p : pods_) {
            if (moved_after.contains(p.name)) continue;
            auto now = shim_->ContainerCgroupCpus(p.container);
            if (now.ok() && *now != before[p.name]) {
              moved_after[p.name] =
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            }
          }
          return moved_after.size() == pods_.size();
        },
        std::chrono::seconds(10));
    for (const auto& p : pods_) {
      auto now = shim_->ContainerCgroupCpus(p.container);
      std::printf(
          "  %-6s cpuset %s -> %s%s\n", p.name.c_str(), before[p.name].c_str(),
          now.ok() ? now->c_str() : "?",
          moved_after.contains(p.name)
              ? fmt::format(" (after {:.1f} s, by the next reconcile)", moved_after[p.name]).c_str()
              : " (unchanged)");
    }
    Report();
  }

  // The shared pool's cpuset as the web container's cgroup shows it.
  std::string WebCpus() { return Cpus(pods_[0].container); }

  std::string Advisor(std::vector<std::string> args) {
    std::vector<std::string> argv = {QRMCTL, "--advisor-socket", File("advisor.sock")};
    argv.insert(argv.end(), args.begin(), args.end());
    return qrm::testing::RunProcess(argv).output;
  }

  // Waits up to `seconds` for the web container's cpuset to change from `from`, printing the
  // cpusets once it did.
  bool WaitCpusetChange(const std::string& from, int seconds, const char* what) {
    const auto start = std::chrono::steady_clock::now();
    const bool changed =
        qrm::testing::WaitFor([&] { return WebCpus() != from; }, std::chrono::seconds(seconds));
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s after %.1f s: web (shared) %s, batch (reclaimed) %s\n", what, took,
                WebCpus().c_str(), Cpus(pods_[1].container).c_str());
    return changed;
  }
  std::string Cpus(const std::string& container) {
    auto cpus = shim_->ContainerCgroupCpus(container);
    return cpus.ok() ? *cpus : "?";
  }

  // qrm-advisor samples the containers and sizes the pools from the shared containers' load
  // (here from recent usage alone, and with a 10 s shrink delay, so the demo stays short).
  bool AdvisorFollowsLoad() {
    std::vector<std::string> argv = {QRM_ADVISOR,
                                     "--runtime-endpoint",
                                     "unix://" + containerd_->socket(),
                                     "--admin-socket",
                                     File("admin.sock"),
                                     "--socket",
                                     File("advisor.sock"),
                                     "--state-dir",
                                     File("advisor"),
                                     "--metrics-address",
                                     "",
                                     "--pool-control-file",
                                     File("cpu") + "/pools.json",
                                     "--pool-model",
                                     "none",
                                     "--min-shared-cpus",
                                     "1",
                                     "--min-reclaimed-cpus",
                                     "0",
                                     "--pool-period",
                                     "1s",
                                     "--pool-shrink-interval",
                                     "10s",
                                     "--inventory-period",
                                     "1s"};
    // It also publishes this node's report to the demo's API server (the next step).
    for (const std::string& flag : cluster_->AdvisorFlags()) argv.push_back(flag);
    Spawn("qrm-advisor", std::move(argv));
    std::this_thread::sleep_for(std::chrono::seconds(4));
    std::printf("%s", Advisor({"usage"}).c_str());
    const std::string idle = WebCpus();
    std::printf(
        "\nweb starts a second container that burns one CPU (sh -c 'while :; do :; done')\n");
    ContainerSpec burner;
    burner.name = "burner";
    burner.command = {"sh", "-c", "while :; do :; done"};
    auto id = shim_->CreateAndStartContainer(pods_[0].pod, burner);
    if (!id.ok()) return false;
    const bool grew = WaitCpusetChange(idle, 20, "shared pool grew");
    std::printf("\n%s\n%s", Advisor({"usage"}).c_str(), Advisor({"prediction"}).c_str());
    (void)shim_->StopAndRemoveContainer(*id);
    std::printf("\nthe burner stops; the pool shrinks back once the shrink delay has passed\n");
    const std::string busy = WebCpus();
    const bool back = WaitCpusetChange(busy, 30, "shared pool shrank");
    // Rebuilt every 10 s from the 5 minute averages: the burner's seconds are in it by now.
    std::printf("\nwhat this node reports to the cluster (Koordinator's NodeMetric):\n%s",
                Advisor({"nodemetric"}).c_str());
    return grew && back && WebCpus() == idle;
  }

  // The node's busy CPUs over about a second, from /proc/stat.
  static double NodeBusyCores() {
    auto read = [] {
      std::ifstream in("/proc/stat");
      std::string cpu;
      double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
      in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
      return std::pair{user + nice + system + irq + softirq, idle + iowait};
    };
    const auto a = read();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const auto b = read();
    const double busy = b.first - a.first, total = busy + b.second - a.second;
    return total > 0 ? busy / total * static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN)) : 0;
  }

  // Waits up to `seconds` for the container's cpu.cfs_quota_us to satisfy `done`; prints it.
  bool WaitQuota(const std::string& id, int seconds, const std::function<bool(int64_t)>& done,
                 const char* what) {
    const auto start = std::chrono::steady_clock::now();
    int64_t quota = 0;
    const bool seen = qrm::testing::WaitFor(
        [&] {
          auto q = shim_->ContainerCgroupCpuQuota(id);
          quota = q.ok() ? *q : 0;
          return done(quota);
        },
        std::chrono::seconds(seconds));
    std::printf("%s after %.1f s: the burner's cpu.cfs_quota_us is %lld (per 100000 us)\n", what,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                static_cast<long long>(quota));
    return seen;
  }

  // qrm-advisor with a guard policy whose watermark is the idle node + 0.5 core: a batch burner
  // (reclaimed_cores, 1-CPU limit) crosses it alone; the guard asks qrm-host to hold it at the
  // quota that closes the gap, and gives its own quota back once the load is gone.
  bool GuardThrottlesAndRestores() {
    const double watermark = NodeBusyCores() + 0.5;
    qrm::testing::WriteFile(File("guard.json"),
                            fmt::format(R"({{"objectiveEnsurances": [{{"name": "cpu-usage",
          "metricRule": {{"name": "cpu_total_usage", "value": {:.2f}}},
          "actionName": "throttle", "avoidanceThreshold": 2, "restoreThreshold": 2,
          "restoreMargin": 0.1}}],
          "throttle": {{"stepCPURatio": 10, "belowRequest": true}}}})",
                                        watermark));
    Spawn("qrm-advisor",
          {QRM_ADVISOR, "--runtime-endpoint", "unix://" + containerd_->socket(), "--admin-socket",
           File("admin.sock"), "--socket", File("advisor.sock"), "--state-dir", File("advisor"),
           "--metrics-address", "", "--pool-control-file", "", "--inventory-period", "1s",
           "--guard-policy", File("guard.json")});
    std::this_thread::sleep_for(std::chrono::seconds(3));
    std::printf("guard policy: cpu_total_usage watermark %.2f cores (the idle node + 0.5)\n",
                watermark);
    std::printf("batch starts a burner with a 1-CPU limit (quota 100000 us per 100000 us)\n");
    ContainerSpec burner;
    burner.name = "burner";
    burner.command = {"sh", "-c", "while [ ! -e /tmp/stop ]; do :; done; exec sleep 1000000"};
    burner.cpu_shares = 1024;
    burner.cpu_period = 100000;
    burner.cpu_quota = 100000;
    auto id = shim_->CreateAndStartContainer(pods_[1].pod, burner);
    if (!id.ok()) return false;
    const bool throttled = WaitQuota(
        *id, 30, [](int64_t q) { return q > 0 && q < 100000; }, "throttled");
    std::printf("\n%s", Advisor({"guard"}).c_str());
    std::printf(
        "\nthe burner stops burning; after 2 samples below the watermark - 0.1 the guard "
        "raises the quota in steps, then qrm-host gives the container its own back\n");
    (void)shim_->ExecSync(*id, {"touch", "/tmp/stop"});
    const bool restored = WaitQuota(
        *id, 90, [](int64_t q) { return q == 100000; }, "restored");
    std::printf("\n%s", Advisor({"guard"}).c_str());
    (void)shim_->StopAndRemoveContainer(*id);
    children_.erase("qrm-advisor");
    return throttled && restored;
  }

  // Waits for two reconcile periods so pool changes caused by the last admission land.
  void WaitSettled() { std::this_thread::sleep_for(std::chrono::milliseconds(2500)); }

  std::unique_ptr<qrm::testing::TempDir> dir_;
  std::unique_ptr<qrm::e2e::Containerd> containerd_;
  std::map<std::string, std::unique_ptr<ChildProcess>> children_;
  std::unique_ptr<CriClient> shim_;
  std::unique_ptr<qrm::demo::ClusterView> cluster_;
  std::vector<DemoPod> pods_;
};

}  // namespace

int main() {
  if (::geteuid() != 0) {
    std::fprintf(stderr, "qrm-demo: run as root (it starts containerd and writes cgroups)\n");
    return 2;
  }
  qrm::ConfigureLogging("warn");
  // Ctrl-C interrupts between steps; the destructors then clean everything up.
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_interrupted = 1; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  int rc = 0;
  {
    Demo demo;
    rc = demo.Run();
  }
  if (g_interrupted) std::printf("\ninterrupted: everything was cleaned up\n");
  return g_interrupted ? 130 : rc;
}
