#include "plugins/sdk/run.h"

#include <csignal>
#include <cstring>
#include <memory>

#include "common/http/http_server.h"
#include "common/log.h"
#include "common/malloc_tuning.h"
#include "common/stop_signals.h"

namespace qrm::sdk {

void TuneMallocForPlugin() {
  TuneMalloc(1);
}

int Run(ResourcePlugin& plugin, const PluginServerOptions& options) {
  auto log = Logger("sdk");
  // Blocked before any gRPC thread exists, so every thread inherits the mask
  // and the signals wait for sigwait below.
  const sigset_t signals = BlockStopSignals();
  PluginServer server(plugin, options);
  if (Status s = server.Start(); !s.ok()) {
    log->error("resource={}: cannot start: {}", plugin.ResourceName(), s.ToString());
    return 1;
  }
  std::unique_ptr<http::HttpServer> metrics;
  if (!options.metrics_address.empty()) {
    metrics = std::make_unique<http::HttpServer>(
        options.metrics_address, http::StandardRoutes([&server, &options] {
          return server.serving() && (!options.register_with_host || server.registrations() > 0 ||
                                      server.watcher_registered());
        }));
    if (Status s = metrics->Start(); !s.ok()) {
      log->error("resource={}: cannot serve metrics: {}", plugin.ResourceName(), s.message());
      server.Stop();
      return 1;
    }
  }
  const int sig = WaitForStopSignal(signals);
  log->info("resource={}: received {}, shutting down", plugin.ResourceName(), StopSignalName(sig));
  if (metrics) metrics->Stop();
  server.Stop();
  if (Status s = plugin.OnStop(); !s.ok()) {
    log->warn("resource={}: stopping: {}", plugin.ResourceName(), s.ToString());
  }
  return 0;
}

}  // namespace qrm::sdk
