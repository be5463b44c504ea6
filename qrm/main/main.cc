// qrm-host: the node agent. CRI shim in front of the container runtime, the host core
// (plugin registry, topology manager, admission, reconcile) and the pod-resources service.
//
// Start-up order matters: the host loads its checkpoint and listens for plugins first; the
// shim then waits for the runtime and resyncs (containers that disappeared while qrm was down
// are released) and only then opens the CRI socket, so the kubelet never sees a shim that
// does not know what is running. SIGTERM/SIGINT stop everything in the reverse order.
#include <atomic>
#include <cstdio>
#include <functional>

#include <signal.h>

#include "common/config/config.h"
#include "common/http/http_server.h"
#include "common/log.h"
#include "common/malloc_tuning.h"
#include "cri-shim/cri_shim.h"
#include "qrm/admin/admin_server.h"
#include "qrm/host/numa_sysfs.h"
#include "qrm/main/host_config.h"
#include "qrm/main/host_metrics.h"
#include "qrm/podresources/pod_resources_server.h"

namespace {

int WaitForSignal(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

// --check-config: the flags are valid (Finish) and the machine's NUMA layout can be read from
// --sysfs-root; nothing is started, no socket or state file is touched.
int CheckConfig(const qrm::host::HostConfig& config) {
  auto numa = qrm::host::LoadNumaInfo(config.host.sysfs_root);
  if (!numa.ok()) {
    std::fprintf(stderr, "qrm-host: sysfs_root: %s\n", numa.status().message().c_str());
    return 2;
  }
  const std::string summary = std::to_string(numa->nodes().size()) + " NUMA node(s)";
  std::fputs(qrm::config::CheckConfigOk("qrm-host", summary).c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // One malloc arena for dozens of gRPC threads: the host's state sits behind its own locks
  // and allocations are small, so contention is not measurable (LOAD ratio unchanged), and
  // bench P7 (1,000 containers) drops from 40 MiB (default arenas) to 32.4 MiB (two: 33.5).
  qrm::TuneMalloc(1);
  // Only the main thread receives SIGTERM/SIGINT (every thread started later inherits the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  qrm::host::HostFlags flags;
  auto parsed = qrm::config::Parse(argc, argv, flags.description());
  if (!parsed.ok()) {
    std::fprintf(stderr, "qrm-host: %s\n", parsed.status().message().c_str());
    return 2;
  }
  if (parsed->exit) {
    std::fputs(parsed->output.c_str(), stdout);
    return 0;
  }
  auto config = flags.Finish();
  if (!config.ok()) {
    std::fprintf(stderr, "qrm-host: %s\n", config.status().message().c_str());
    return 2;
  }
  if (parsed->check_only) return CheckConfig(*config);
  if (!qrm::ConfigureLogging(config->log_level, config->log_format)) {
    std::fprintf(stderr, "qrm-host: log_level: invalid value \"%s\"\n", config->log_level.c_str());
    return 2;
  }
  auto log = qrm::Logger("qrm-host");

  // Health first, so a supervisor sees the process alive while it waits for the runtime;
  // /readyz turns ready only once the CRI socket serves after the start-up resync, and
  // false again when a listener (CRI, registration, admin) is gone.
  std::atomic<bool> ready{false};
  std::function<bool()> listeners_alive;  // set before `ready` turns true, read only after
  std::unique_ptr<qrm::http::HttpServer> http;
  if (!config->metrics_address.empty()) {
    http = std::make_unique<qrm::http::HttpServer>(
        config->metrics_address,
        qrm::http::StandardRoutes([&] { return ready.load() && listeners_alive(); }),
        config->http_limits);
    if (qrm::Status s = http->Start(); !s.ok()) {
      log->error("cannot serve metrics: {}", s.message());
      return 1;
    }
  }

  qrm::host::Host host(config->host);
  auto shim = qrm::shim::CriShim::Create(config->shim, host);
  if (!shim.ok()) {
    log->error("cannot start: {}", shim.status().message());
    return 2;
  }
  if (qrm::Status s = host.Start((*shim)->applier(), &(*shim)->view()); !s.ok()) {
    log->error("cannot start the host core: {}", s.ToString());
    return 1;
  }
  // The registry exists once the host has started.
  qrm::host::RegisterHostCollectors((*shim)->counters(), host.registry());
  auto stop_all = [&] {
    if (http) http->Stop();  // its collectors read the shim and the registry
    (*shim)->Stop();
    host.Stop();
  };
  if (qrm::Status s = (*shim)->ConnectRuntime(); !s.ok()) {
    log->error("cannot reach the container runtime: {}", s.ToString());
    stop_all();
    return 1;
  }
  auto resync = (*shim)->Resync();
  if (!resync.ok()) {
    log->error("start-up resync failed: {}", resync.status().ToString());
    stop_all();
    return 1;
  }
  // pod-resources lists every active pod (the runtime's containers too) and gives memory bound
  // to no NUMA node the topology of the whole machine.
  qrm::host::PodResourcesOptions pod_resources_options = config->pod_resources;
  if (auto numa = config->host.numa ? qrm::StatusOr<qrm::topology::NumaInfo>(*config->host.numa)
                                    : qrm::host::LoadNumaInfo(config->host.sysfs_root);
      numa.ok()) {
    pod_resources_options.mapping.machine_nodes = numa->DefaultAffinity();
  }
  qrm::host::PodResourcesServer pod_resources(
      pod_resources_options, host.state(), [&host] { return host.AggregateAllocatable(); },
      &(*shim)->view());
  if (qrm::Status s = pod_resources.Start(); !s.ok()) {
    log->error("cannot serve pod-resources: {}", s.ToString());
    stop_all();
    return 1;
  }
  qrm::host::AdminServer admin(config->admin, host);
  if (qrm::Status s = admin.Start(); !s.ok()) {
    log->error("cannot serve the admin socket: {}", s.ToString());
    pod_resources.Stop();
    stop_all();
    return 1;
  }
  if (qrm::Status s = (*shim)->Serve(); !s.ok()) {
    log->error("cannot serve CRI: {}", s.ToString());
    admin.Stop();
    pod_resources.Stop();
    stop_all();
    return 1;
  }
  listeners_alive = [&] {
    return (*shim)->listening() && host.registry().listening() && admin.listening();
  };
  ready = true;
  log->info("ready: CRI on {}, runtime {}, plugins in {}, pod-resources on {}",
            (*shim)->socket_path(), config->shim.runtime_endpoint, config->host.registry.plugin_dir,
            config->pod_resources.socket);

  const int sig = WaitForSignal(signals);
  log->info("received {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  ready = false;
  if (http) http->Stop();  // before the listeners /readyz looks at go away
  admin.Stop();
  pod_resources.Stop();
  stop_all();
  return 0;
}
