#include "plugins/sdk/run.h"

#include <cstring>
#include <memory>

#include <signal.h>

#include "common/http/http_server.h"
#include "common/log.h"
#include "common/malloc_tuning.h"

namespace qrm::sdk {

void TuneMallocForPlugin() {
  TuneMalloc(1);
}

int Run(ResourcePlugin& plugin, const PluginServerOptions& options) {
  auto log = Logger("sdk");
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  // Blocked before any gRPC thread exists, so every thread inherits the mask
  // and the signals wait for sigwait below.
  if (int rc = pthread_sigmask(SIG_BLOCK, &signals, nullptr); rc != 0) {
    log->error("resource={}: cannot block signals: {}", plugin.ResourceName(), std::strerror(rc));
    return 1;
  }
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
  int sig = 0;
  sigwait(&signals, &sig);
  log->info("resource={}: received {}, shutting down", plugin.ResourceName(), strsignal(sig));
  if (metrics) metrics->Stop();
  server.Stop();
  if (Status s = plugin.OnStop(); !s.ok()) {
    log->warn("resource={}: stopping: {}", plugin.ResourceName(), s.ToString());
  }
  return 0;
}

}  // namespace qrm::sdk
