// The CRI shim's cost against a private containerd (the e2e harness), both paths measured
// in the same run, interleaved call by call (paired_timing.h):
//
//   P3_Version, P3_ListContainers (50 containers): pass-through calls;
//   P4: pod start with the three plugins admitting it (pod_start_bench.h);
//   P4_null: the same comparison with both paths direct (an A/A run: containerd's own spread
//            of one run's ratio, the floor under P4's per-run figures).
//
// Each prints "<id> <shim median> ms ratio=<shim/direct medians>" and "<id>_p90 ..." on
// stdout (scripts/bench's contract) and both paths' median and p90 as a note on stderr.
//
// Needs root (containerd). Flags: --only ID (repeatable: P3, P3_Version, P3_ListContainers,
// P4), --iterations N (timed Version pairs, default 3000; ListContainers gets N/5),
// --warmup N (untimed pairs, default 200), --containers N (default 50), --pod-rounds N
// (timed pods per path in each P4 run, default 60; 0 skips P4), --pod-runs N (consecutive P4
// runs, each printed, default 5).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "bench/cri_shim/grpc_hop_floor.h"
#include "bench/cri_shim/paired_timing.h"
#include "bench/cri_shim/pod_start_bench.h"
#include "common/log.h"
#include "cri-shim/cri_shim.h"
#include "qrm/host/host.h"
#include "testing/e2e/containerd.h"
#include "testing/e2e/cri_client.h"
#include "testing/temp_dir.h"

namespace {

namespace cri = qrm::e2e::cri;

struct Config {
  int iterations = 3000;
  int warmup = 200;
  int containers = 50;
  int pod_rounds = 60;
  int pod_runs = 5;
  std::vector<std::string> only;

  // Whether figure `id` was asked for (no --only: all), with scripts/bench's family rules:
  // "P3" selects P3_Version, "P3_Version_p90" selects the run that prints it.
  bool Wants(const std::string& id) const {
    if (only.empty()) return true;
    for (const auto& o : only) {
      if (o == id || id.rfind(o + "_", 0) == 0 || o.rfind(id + "_", 0) == 0) return true;
    }
    return false;
  }
};

Config ParseFlags(int argc, char** argv) {
  Config config;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--only") {
      config.only.push_back(value);
    } else if (flag == "--iterations") {
      config.iterations = std::atoi(value);
    } else if (flag == "--warmup") {
      config.warmup = std::atoi(value);
    } else if (flag == "--containers") {
      config.containers = std::atoi(value);
    } else if (flag == "--pod-rounds") {
      config.pod_rounds = std::atoi(value);
    } else if (flag == "--pod-runs") {
      config.pod_runs = std::max(1, std::atoi(value));
    } else {
      std::fprintf(stderr, "passthrough_bench: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return config;
}

bool CallVersion(qrm::e2e::CriClient& c) {
  cri::VersionResponse r;
  return c.runtime().Version(c.Context().get(), {}, &r).ok();
}

// One pass-through comparison; exits the run if a call fails.
void ComparePassThrough(const std::string& id, int warmup, int iterations, const std::string& note,
                        qrm::e2e::CriClient& direct, qrm::e2e::CriClient& shim,
                        const std::function<bool(qrm::e2e::CriClient&)>& call) {
  const qrm::bench::PairedRun run = qrm::bench::TimePaired(
      warmup, iterations, [&](bool through_shim) { return call(through_shim ? shim : direct); });
  if (!run.ok) {
    std::fprintf(stderr, "passthrough_bench: a %s call failed\n", id.c_str());
    std::exit(1);
  }
  qrm::bench::PrintComparison(id, run.latencies, note);
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = ParseFlags(argc, argv);
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

  if (config.Wants("P3_Version")) {
    ComparePassThrough("P3_Version", config.warmup, config.iterations, "", direct, through,
                       CallVersion);
    // For reading the figure: what one bare C++ gRPC hop costs here, next to containerd's
    // Version (the shim adds at least one such hop).
    qrm::bench::GrpcHopFloor floor(dir.File("floor.sock"));
    qrm::e2e::CriClient floor_client(floor.socket_path(), (*containerd)->ClientOptions());
    const auto run = qrm::bench::TimePaired(config.warmup, config.iterations, [&](bool hop) {
      return CallVersion(hop ? floor_client : direct);
    });
    std::fprintf(stderr,
                 "# P3 floor: Version on a trivial C++ gRPC server: median %.4f ms p90 %.4f ms "
                 "(containerd direct: median %.4f ms)\n",
                 qrm::bench::Quantile(run.latencies.shim, 0.5),
                 qrm::bench::Quantile(run.latencies.shim, 0.9),
                 qrm::bench::Quantile(run.latencies.direct, 0.5));
  }
  if (config.Wants("P3_ListContainers")) {
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
    const int containers = config.containers;
    ComparePassThrough("P3_ListContainers", std::max(1, config.warmup / 5),
                       std::max(1, config.iterations / 5),
                       ", containers=" + std::to_string(containers), direct, through,
                       [containers](qrm::e2e::CriClient& c) {
                         cri::ListContainersResponse r;
                         return c.runtime().ListContainers(c.Context().get(), {}, &r).ok() &&
                                r.containers_size() == containers;
                       });
    (void)direct.StopAndRemovePod(pod->id);  // P4 starts from an empty node
  }

  if (config.pod_rounds > 0 && config.Wants("P4")) {
    qrm::bench::PodStartConfig pod_config;
    pod_config.pods = config.pod_rounds;
    pod_config.runs = config.pod_runs;
    if (!qrm::bench::ComparePodStart(pod_config, dir, host, direct, through)) return 1;
  }
  if (config.pod_rounds > 0 && config.Wants("P4_null")) {
    qrm::bench::PodStartConfig null_config;
    null_config.pods = config.pod_rounds;
    null_config.runs = config.pod_runs;
    null_config.null_run = true;
    if (!qrm::bench::ComparePodStart(null_config, dir, host, direct, through)) return 1;
  }

  (*shim)->Stop();
  host.Stop();
  const auto leftovers = (*containerd)->Stop();
  for (const auto& l : leftovers) std::fprintf(stderr, "cleanup: %s\n", l.c_str());
  return 0;
}
