// qrm-host: the node agent. CRI shim in front of the container runtime, the host core
// (plugin registry, topology manager, admission, reconcile) and the pod-resources service.
//
// Start-up order matters: the host loads its checkpoint and listens for plugins first; the
// shim then waits for the runtime and resyncs (containers that disappeared while qrm was down
// are released) and only then opens the CRI socket, so the kubelet never sees a shim that
// does not know what is running. SIGTERM/SIGINT stop everything in the reverse order.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include "cmd/qrm-host/host_config.h"
#include "cmd/qrm-host/host_metrics.h"
#include "common/config/config.h"
#include "common/http/http_server.h"
#include "common/log.h"
#include "common/malloc_tuning.h"
#include "common/stop_signals.h"
#include "common/stop_stack.h"
#include "cri-shim/cri_shim.h"
#include "qrm/admin/admin_server.h"
#include "qrm/host/host.h"
#include "qrm/podresources/pod_resources_server.h"

namespace {

using qrm::host::HostConfig;

constexpr int kBadConfiguration = 2;  // exit codes: flags, config file or machine unreadable
constexpr int kFailed = 1;            // a part could not start

// --check-config: the flags are valid (Finish) and the machine's NUMA layout can be read from
// --sysfs-root; nothing is started, no socket or state file is touched.
int CheckConfig(const HostConfig& config) {
  auto numa = qrm::host::LoadNumaInfo(config.host.sysfs_root);
  if (!numa.ok()) {
    std::fprintf(stderr, "qrm-host: sysfs_root: %s\n", numa.status().message().c_str());
    return kBadConfiguration;
  }
  const std::string summary = std::to_string(numa->nodes().size()) + " NUMA node(s)";
  std::fputs(qrm::config::CheckConfigOk("qrm-host", summary).c_str(), stdout);
  return 0;
}

// Flags and config file, then logging. Returns the configuration to run with, or sets
// `exit_code` (help and version: 0; --check-config: its verdict; an error: 2).
std::optional<HostConfig> LoadConfig(int argc, char** argv, int& exit_code) {
  qrm::host::HostFlags flags;
  auto parsed = qrm::config::Parse(argc, argv, flags.description());
  exit_code = kBadConfiguration;
  if (!parsed.ok()) {
    std::fprintf(stderr, "qrm-host: %s\n", parsed.status().message().c_str());
    return std::nullopt;
  }
  if (parsed->exit) {
    std::fputs(parsed->output.c_str(), stdout);
    exit_code = 0;
    return std::nullopt;
  }
  auto config = flags.Finish();
  if (!config.ok()) {
    std::fprintf(stderr, "qrm-host: %s\n", config.status().message().c_str());
    return std::nullopt;
  }
  if (parsed->check_only) {
    exit_code = CheckConfig(*config);
    return std::nullopt;
  }
  if (!qrm::ConfigureLogging(config->log_level, config->log_format)) {
    std::fprintf(stderr, "qrm-host: log_level: invalid value \"%s\"\n", config->log_level.c_str());
    return std::nullopt;
  }
  return std::move(*config);
}

// pod-resources lists every active pod (the runtime's containers too) and gives memory bound
// to no NUMA node the topology of the whole machine.
qrm::podresources::PodResourcesOptions PodResourcesOptionsFor(const HostConfig& config) {
  qrm::podresources::PodResourcesOptions options = config.pod_resources;
  if (auto numa = config.host.numa ? qrm::StatusOr<qrm::topology::NumaInfo>(*config.host.numa)
                                   : qrm::host::LoadNumaInfo(config.host.sysfs_root);
      numa.ok()) {
    options.mapping.machine_nodes = numa->DefaultAffinity();
  }
  return options;
}

// The running parts of qrm-host, in the order they start.
struct Parts {
  std::atomic<bool> ready{false};
  std::function<bool()> listeners_alive;  // set before `ready` turns true, read only after
  std::unique_ptr<qrm::http::HttpServer> http;
  std::unique_ptr<qrm::host::Host> host;
  std::unique_ptr<qrm::shim::CriShim> shim;
  std::unique_ptr<qrm::podresources::PodResourcesServer> pod_resources;
  std::unique_ptr<qrm::admin::AdminServer> admin;
};

// Health first, so a supervisor sees the process alive while it waits for the runtime;
// /readyz turns ready only once the CRI socket serves after the start-up resync, and false
// again when a listener (CRI, registration, admin) is gone.
qrm::Status StartHealth(const HostConfig& config, Parts& parts, qrm::StopStack& stops) {
  if (config.metrics_address.empty()) return qrm::Status::Ok();
  parts.http = std::make_unique<qrm::http::HttpServer>(
      config.metrics_address,
      qrm::http::StandardRoutes([&parts] { return parts.ready.load() && parts.listeners_alive(); }),
      config.http_limits);
  QRM_RETURN_IF_ERROR(parts.http->Start().WithContext("cannot serve metrics"));
  stops.Push([&parts] { parts.http->Stop(); });
  return qrm::Status::Ok();
}

// The host core and the shim in front of the runtime: connected and resynced (containers that
// went away while qrm was down are released), not yet serving CRI.
qrm::Status StartCore(const HostConfig& config, Parts& parts, qrm::StopStack& stops) {
  parts.host = std::make_unique<qrm::host::Host>(config.host);
  auto shim = qrm::shim::CriShim::Create(config.shim, *parts.host);
  if (!shim.ok()) return shim.status().WithContext("cannot start");
  parts.shim = std::move(*shim);
  QRM_RETURN_IF_ERROR(parts.host->Start(parts.shim->applier(), &parts.shim->view())
                          .WithContext("cannot start the host core"));
  stops.Push([&parts] { parts.host->Stop(); });
  stops.Push([&parts] { parts.shim->Stop(); });
  // The registry exists once the host has started; from here the /metrics collectors read the
  // shim and the registry, so /metrics stops before them.
  qrm::host::RegisterHostCollectors(parts.shim->counters(), parts.host->registry());
  if (parts.http) stops.Push([&parts] { parts.http->Stop(); });
  QRM_RETURN_IF_ERROR(
      parts.shim->ConnectRuntime().WithContext("cannot reach the container runtime"));
  auto resync = parts.shim->Resync();
  return resync.ok() ? qrm::Status::Ok() : resync.status().WithContext("start-up resync failed");
}

// pod-resources, the admin socket, and last the CRI socket: the kubelet never sees a shim
// that does not know what is running.
qrm::Status StartServing(const HostConfig& config, Parts& parts, qrm::StopStack& stops) {
  parts.pod_resources = std::make_unique<qrm::podresources::PodResourcesServer>(
      PodResourcesOptionsFor(config), parts.host->state(),
      [&parts] { return parts.host->AggregateAllocatable(); }, &parts.shim->view());
  QRM_RETURN_IF_ERROR(parts.pod_resources->Start().WithContext("cannot serve pod-resources"));
  stops.Push([&parts] { parts.pod_resources->Stop(); });
  parts.admin = std::make_unique<qrm::admin::AdminServer>(config.admin, *parts.host);
  QRM_RETURN_IF_ERROR(parts.admin->Start().WithContext("cannot serve the admin socket"));
  stops.Push([&parts] { parts.admin->Stop(); });
  QRM_RETURN_IF_ERROR(parts.shim->Serve().WithContext("cannot serve CRI"));
  parts.listeners_alive = [&parts] {
    return parts.shim->listening() && parts.host->registry().listening() &&
           parts.admin->listening();
  };
  return qrm::Status::Ok();
}

// Starts every part, serves until SIGTERM/SIGINT, and stops them in reverse order.
int Run(const HostConfig& config, const sigset_t& signals) {
  auto log = qrm::Logger("qrm-host");
  Parts parts;
  qrm::StopStack stops;  // declared after `parts`: stops them before they are destroyed
  if (qrm::Status s = StartHealth(config, parts, stops); !s.ok()) {
    log->error("{}", s.ToString());
    return kFailed;
  }
  if (qrm::Status s = StartCore(config, parts, stops); !s.ok()) {
    log->error("{}", s.ToString());
    return parts.shim ? kFailed : kBadConfiguration;  // CriShim::Create checks the options
  }
  if (qrm::Status s = StartServing(config, parts, stops); !s.ok()) {
    log->error("{}", s.ToString());
    return kFailed;
  }
  parts.ready = true;
  // On the signal /metrics and /readyz go first, before the listeners /readyz looks at.
  if (parts.http) stops.Push([&parts] { parts.http->Stop(); });
  log->info("ready: CRI on {}, runtime {}, plugins in {}, pod-resources on {}",
            parts.shim->socket_path(), config.shim.runtime_endpoint,
            config.host.registry.plugin_dir, config.pod_resources.socket);
  const int sig = qrm::WaitForStopSignal(signals);
  log->info("received {}, shutting down", qrm::StopSignalName(sig));
  parts.ready = false;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Idle pool threads would strand up to ~240 KiB each in glibc's per-thread caches (bench P7:
  // 1.1 MiB with 1,000 containers); glibc reads that bound only at start (malloc_tuning.h).
  qrm::ReexecWithBoundedThreadCache(argv);
  // One malloc arena for dozens of gRPC threads: the host's state sits behind its own locks
  // and allocations are small, so contention is not measurable (LOAD ratio unchanged), and
  // bench P7 (1,000 containers) drops from 40 MiB (default arenas) to 32.4 MiB (two: 33.5).
  qrm::TuneMalloc(1);
  const sigset_t signals = qrm::BlockStopSignals();
  int exit_code = 0;
  const std::optional<HostConfig> config = LoadConfig(argc, argv, exit_code);
  if (!config) return exit_code;
  return Run(*config, signals);
}
