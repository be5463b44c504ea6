#include "tests/integration/cluster/fake_cluster.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cluster/objects/node_metric.h"
#include "cluster/objects/node_metric_json.h"

namespace qrm::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kTicksPerSecond = 100;  // USER_HZ

// Writes `content` to `path` through a rename, so the advisor never reads half a file.
void Replace(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  WriteFile(tmp, content);
  std::filesystem::rename(tmp, path);
}

std::string NodeJson(const FakeNodeSpec& n) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{0}","labels":)"
      R"({{"kubernetes.io/hostname":"{0}"}}}},"spec":{{}},"status":{{"capacity":{{"cpu":"{1}",)"
      R"("memory":"{2}Gi","pods":"110"}},"allocatable":{{"cpu":"{1}","memory":"{2}Gi",)"
      R"("pods":"110"}}}}}})",
      n.name, n.cpus, n.memory_gib);
}

}  // namespace

std::string PendingPodJson(const std::string& ns, const std::string& name, int cpu_milli,
                           int memory_mib) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{1}","namespace":"{0}",)"
      R"("uid":"uid-{0}-{1}"}},"spec":{{"schedulerName":"default-scheduler","containers":[)"
      R"({{"name":"app","image":"busybox","resources":{{"requests":{{"cpu":"{2}m",)"
      R"("memory":"{3}Mi"}},"limits":{{"cpu":"{2}m","memory":"{3}Mi"}}}}}}]}},)"
      R"("status":{{"phase":"Pending","qosClass":"Guaranteed"}}}})",
      ns, name, cpu_milli, memory_mib);
}

FakeCluster::FakeCluster(std::vector<FakeNodeSpec> nodes)
    : specs_(std::move(nodes)),
      nodes_(server_, {.path = "/api/v1/nodes", .kind = "Node", .api_version = "v1"}),
      metrics_(server_, {.path = cluster::kNodeMetricsPath,
                         .kind = cluster::kNodeMetricKind,
                         .api_version = cluster::kNodeMetricApiVersion}),
      pods_(server_, {.path = "/api/v1/pods",
                      .kind = "Pod",
                      .api_version = "v1",
                      .namespaced = true,
                      .binding = true}) {
  REQUIRE(server_.Start().ok());
  for (const FakeNodeSpec& n : specs_) nodes_.Seed(n.name, NodeJson(n));
  kubeconfig_ = dir_.File("kubeconfig");
  WriteFile(kubeconfig_, server_.Kubeconfig());
  for (const FakeNodeSpec& n : specs_) {
    std::filesystem::create_directories(dir_.File(n.name + "/proc"));
    std::filesystem::create_directories(dir_.File(n.name + "/cgroup"));
    std::filesystem::create_directories(dir_.File(n.name + "/sys"));
    const int64_t kib = n.memory_gib << 20;
    Replace(dir_.File(n.name + "/proc/meminfo"),
            fmt::format("MemTotal:       {} kB\nMemFree:        {} kB\nMemAvailable:   {} kB\n",
                        kib, kib - (n.used_memory_gib << 20), kib - (n.used_memory_gib << 20)));
  }
  WriteCounters(1000);  // an hour and some of history, then 10 ticks a second
  load_writer_ = std::thread([this] {
    const auto start = std::chrono::steady_clock::now();
    while (!stop_.load()) {
      std::this_thread::sleep_for(100ms);
      WriteCounters(
          1000 + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  });
}

FakeCluster::~FakeCluster() {
  for (auto& a : advisors_) a->Kill(SIGTERM);
  stop_ = true;
  if (load_writer_.joinable()) load_writer_.join();
}

// /proc/stat after `seconds` of each node's load: busy ticks in user, the rest idle, spread
// over the cpuN lines.
void FakeCluster::WriteCounters(double seconds) {
  for (const FakeNodeSpec& n : specs_) {
    const auto busy = static_cast<int64_t>(n.load_cores * kTicksPerSecond * seconds);
    const auto idle = static_cast<int64_t>((n.cpus - n.load_cores) * kTicksPerSecond * seconds);
    std::string text = fmt::format("cpu  {} 0 0 {} 0 0 0 0 0 0\n", busy, idle);
    for (int c = 0; c < n.cpus; ++c) {
      text += fmt::format("cpu{} {} 0 0 {} 0 0 0 0 0 0\n", c, busy / n.cpus, idle / n.cpus);
    }
    Replace(dir_.File(n.name + "/proc/stat"), text);
  }
}

void FakeCluster::StartAdvisors(const std::string& advisor) {
  for (const FakeNodeSpec& n : specs_) {
    const std::string home = dir_.File(n.name);
    advisors_.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{advisor,
                                 "--node-name",
                                 n.name,
                                 "--publish-node-report",
                                 "true",
                                 "--kubeconfig",
                                 kubeconfig_,
                                 "--report-interval",
                                 "30s",
                                 "--state-dir",
                                 "",
                                 "--metrics-address",
                                 "",
                                 "--socket",
                                 home + "/advisor.sock",
                                 "--admin-socket",
                                 home + "/no-host.sock",
                                 "--runtime-endpoint",
                                 "unix://" + home + "/no-runtime.sock",
                                 "--cgroup-root",
                                 home + "/cgroup",
                                 "--procfs-root",
                                 home + "/proc",
                                 "--sysfs-root",
                                 home + "/sys"},
        LogOf(n.name)));
  }
}

std::string FakeCluster::LogOf(const std::string& node) const {
  return dir_.File(node + "/advisor.log");
}

bool FakeCluster::WaitForNodeMetrics(int timeout_s) {
  return WaitFor(
      [&] {
        for (const FakeNodeSpec& n : specs_) {
          const std::optional<std::string> json = metrics_.Get(n.name);
          if (!json) return false;
          StatusOr<cluster::NodeMetric> metric = cluster::DecodeNodeMetric(*json);
          if (!metric.ok() || !metric->status.node_metric) return false;
          const auto& usage = metric->status.node_metric->node_usage.resources;
          if (!usage.contains("cpu")) return false;
        }
        return true;
      },
      std::chrono::seconds(timeout_s));
}

}  // namespace qrm::testing
