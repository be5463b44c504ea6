// P3: what the CRI shim adds to pass-through calls. A private containerd (the e2e harness)
// with 50 containers; Version and ListContainers are timed directly against containerd and
// through the shim, alternating in rounds within one run, and the medians compared:
//
//   P3 method=Version direct_ms=0.081 shim_ms=0.142 ratio=1.75
//   P3 method=ListContainers direct_ms=1.9 shim_ms=2.1 ratio=1.11 containers=50
//
// Needs root (containerd). Flags: --rounds N (default 30), --calls N per round (default 100),
// --containers N (default 50).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "cri-shim/cri_shim.h"
#include "qrm/host/host.h"
#include "tests/e2e/support/containerd.h"
#include "tests/e2e/support/cri_client.h"
#include "tests/support/child_process.h"
#include "tests/support/temp_dir.h"

namespace {

namespace cri = qrm::e2e::cri;
using Clock = std::chrono::steady_clock;

struct Config {
  int rounds = 30;
  int calls = 100;
  int containers = 50;
  int pod_rounds = 15;  // P4; 0 skips it
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Milliseconds per call of `call`, `calls` times in a row; aborts the run on a failed call.
double TimeCalls(int calls, const std::function<bool()>& call) {
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) {
    if (!call()) {
      std::fprintf(stderr, "passthrough_bench: a call failed\n");
      std::exit(1);
    }
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / calls;
}

// Alternates direct and shim rounds (so drift hits both alike) and prints the P3 line, with
// `extra` ("key=value" pairs) after the fields every P3 line has.
void Compare(const Config& config, const std::string& method, const std::string& extra, int calls,
             const std::function<bool(qrm::e2e::CriClient&)>& call, qrm::e2e::CriClient& direct,
             qrm::e2e::CriClient& shim) {
  TimeCalls(calls, [&] { return call(direct); });  // warm-up: connections, caches
  TimeCalls(calls, [&] { return call(shim); });
  std::vector<double> direct_ms, shim_ms;
  for (int r = 0; r < config.rounds; ++r) {
    direct_ms.push_back(TimeCalls(calls, [&] { return call(direct); }));
    shim_ms.push_back(TimeCalls(calls, [&] { return call(shim); }));
  }
  const double d = Median(direct_ms), s = Median(shim_ms);
  // scripts/bench's contract: "ID value unit ratio=X" (the ratio is shim / direct).
  std::fprintf(stderr, "# P3_%s: direct %.4f ms, shim %.4f ms per call%s\n", method.c_str(), d, s,
               extra.c_str());
  std::printf("P3_%s %.4f ms ratio=%.3f\n", method.c_str(), s, s / d);
  std::fflush(stdout);
}

// Times RunPodSandbox + CreateContainer + StartContainer of a one-container pod.
double TimePodStart(qrm::e2e::CriClient& cri, const std::string& name, const std::string& qos,
                    std::vector<std::string>* pods) {
  const auto start = std::chrono::steady_clock::now();
  auto pod = cri.RunHostNetworkPod(name, name + "-uid", "default",
                                   {{"katalyst.kubewharf.io/qos_level", qos}});
  if (!pod.ok()) return -1;
  pods->push_back(pod->id);
  qrm::e2e::ContainerSpec spec;
  spec.name = "main";
  spec.cpu_shares = 512;
  spec.memory_limit_in_bytes = 32LL << 20;
  auto id = cri.CreateAndStartContainer(*pod, spec);
  if (!id.ok()) return -1;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// P4: pod start through the shim with the CPU, memory and NIC plugins admitting it, against
// the same start directly on containerd, alternating, same run.
bool ComparePodStart(const Config& config, qrm::testing::TempDir& dir, qrm::host::Host& host,
                     qrm::e2e::CriClient& direct, qrm::e2e::CriClient& through) {
  const std::string plugins = dir.File("plugins");
  std::vector<std::unique_ptr<qrm::testing::ChildProcess>> children;
  children.push_back(std::make_unique<qrm::testing::ChildProcess>(
      std::vector<std::string>{QRM_CPU_PLUGIN, "--plugin-dir", plugins, "--state-dir",
                               dir.File("cpu"), "--reclaimed-pool-size", "0", "--log-level",
                               "warn"},
      dir.File("cpu.log")));
  children.push_back(std::make_unique<qrm::testing::ChildProcess>(
      std::vector<std::string>{QRM_MEMORY_PLUGIN, "--plugin-dir", plugins, "--state-dir",
                               dir.File("memory"), "--log-level", "warn"},
      dir.File("memory.log")));
  children.push_back(std::make_unique<qrm::testing::ChildProcess>(
      std::vector<std::string>{QRM_NIC_PLUGIN, "--plugin-dir", plugins, "--state-dir",
                               dir.File("nic"), "--include-virtual", "--unknown-nic-speed-mbps",
                               "10000", "--log-level", "warn"},
      dir.File("nic.log")));
  if (!qrm::testing::WaitFor([&] {
        return host.registry().Find("cpu") && host.registry().Find("memory") &&
               host.registry().Find("qrm.io/nic");
      })) {
    std::fprintf(stderr, "P4: the plugins did not register\n");
    return false;
  }
  std::vector<double> direct_ms, shim_ms;
  std::vector<std::string> direct_pods, shim_pods;
  for (int r = 0; r < config.pod_rounds + 1; ++r) {  // round 0 warms up both paths
    const double d =
        TimePodStart(direct, "direct-" + std::to_string(r), "shared_cores", &direct_pods);
    const double s = TimePodStart(through, "shim-" + std::to_string(r), "shared_cores", &shim_pods);
    if (d < 0 || s < 0) {
      std::fprintf(stderr, "P4: a pod failed to start\n");
      return false;
    }
    if (r > 0) {
      direct_ms.push_back(d);
      shim_ms.push_back(s);
    }
    // Keep the node's pod count small and equal for both paths.
    (void)direct.StopAndRemovePod(direct_pods.back());
    (void)through.StopAndRemovePod(shim_pods.back());
  }
  const double d = Median(direct_ms), s = Median(shim_ms);
  std::fprintf(stderr,
               "# P4: pod start direct %.1f ms, through the shim with 3 plugins %.1f ms "
               "(median of %d)\n",
               d, s, config.pod_rounds);
  std::printf("P4 %.2f ms ratio=%.3f\n", s, s / d);
  return true;
}

int ParseFlag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  config.rounds = ParseFlag(argc, argv, "--rounds", config.rounds);
  config.calls = ParseFlag(argc, argv, "--calls", config.calls);
  config.containers = ParseFlag(argc, argv, "--containers", config.containers);
  config.pod_rounds = ParseFlag(argc, argv, "--pod-rounds", config.pod_rounds);
  if (::geteuid() != 0) {
    std::fprintf(stderr, "passthrough_bench: needs root (it runs a private containerd)\n");
    return 2;
  }
  qrm::ConfigureLogging("warn");
  auto containerd = qrm::e2e::Containerd::Start();
  if (!containerd.ok()) {
    std::fprintf(stderr, "containerd: %s\n", containerd.status().ToString().c_str());
    return 1;
  }
  qrm::testing::TempDir dir;
  qrm::host::HostOptions host_options;
  host_options.registry.plugin_dir = dir.File("plugins");
  host_options.state_dir = dir.File("state");
  host_options.reconcile_period = std::chrono::milliseconds(0);
  host_options.admission.always_consult = {"qrm.io/nic"};
  ::mkdir(host_options.registry.plugin_dir.c_str(), 0750);
  qrm::host::Host host(host_options);
  qrm::shim::ShimOptions options;
  options.cri_socket = dir.File("cri.sock");
  options.runtime_endpoint = (*containerd)->socket();
  auto shim = qrm::shim::CriShim::Create(options, host);
  qrm::Status s = shim.ok() ? host.Start((*shim)->applier(), &(*shim)->view()) : shim.status();
  if (s.ok()) s = (*shim)->ConnectRuntime();
  if (s.ok()) s = (*shim)->Resync().status();
  if (s.ok()) s = (*shim)->Serve();
  if (!s.ok()) {
    std::fprintf(stderr, "shim: %s\n", s.ToString().c_str());
    return 1;
  }

  qrm::e2e::CriClient direct = (*containerd)->Client();
  qrm::e2e::CriClient through((*shim)->socket_path(), (*containerd)->ClientOptions());
  auto pod = direct.RunHostNetworkPod("bench", "uid-bench", "default");
  if (!pod.ok()) {
    std::fprintf(stderr, "RunPodSandbox: %s\n", pod.status().ToString().c_str());
    return 1;
  }
  for (int i = 0; i < config.containers; ++i) {
    qrm::e2e::ContainerSpec spec;
    spec.name = "c" + std::to_string(i);
    spec.labels["bench"] = "p3";
    auto id = direct.CreateContainer(*pod, spec);
    if (!id.ok()) {
      std::fprintf(stderr, "CreateContainer: %s\n", id.status().ToString().c_str());
      return 1;
    }
  }

  Compare(
      config, "Version", "", config.calls,
      [](qrm::e2e::CriClient& c) {
        cri::VersionResponse r;
        return c.runtime().Version(c.Context().get(), cri::VersionRequest(), &r).ok();
      },
      direct, through);
  const int list_calls = std::max(1, config.calls / 4);
  Compare(
      config, "ListContainers", " containers=" + std::to_string(config.containers), list_calls,
      [&config](qrm::e2e::CriClient& c) {
        cri::ListContainersResponse r;
        return c.runtime().ListContainers(c.Context().get(), {}, &r).ok() &&
               r.containers_size() == config.containers;
      },
      direct, through);

  if (config.pod_rounds > 0) {
    if (!ComparePodStart(config, dir, host, direct, through)) return 1;
  }

  (*shim)->Stop();
  host.Stop();
  const auto leftovers = (*containerd)->Stop();
  for (const auto& l : leftovers) std::fprintf(stderr, "cleanup: %s\n", l.c_str());
  return 0;
}
