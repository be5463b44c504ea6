// qrm-scheduler-extender: Koordinator's LoadAwareScheduling as a kube-scheduler extender
// (docs/scheduling.md), and optionally the pod webhook (docs/webhook.md).
//
// Start order: configuration (everything validated, exit 2 otherwise), the API client, the
// informers, the HTTP server (it answers /readyz 503 until the informers listed once, or
// --sync-timeout passed), the webhook's HTTPS server. SIGTERM/SIGINT stop them in reverse.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <pthread.h>

#include "cluster/kube/kube_client.h"
#include "cluster/kube/kube_config.h"
#include "cluster/scheduler/extender_routes.h"
#include "cluster/scheduler/extender_service.h"
#include "cluster/scheduler/informers.h"
#include "cluster/webhook/webhook_handler.h"
#include "cmd/qrm-scheduler-extender/extender_config.h"
#include "common/config/config.h"
#include "common/http/http_server.h"
#include "common/log.h"
#include "common/stop_signals.h"

namespace qrm::extender_cmd {
namespace {

constexpr const char* kProgram = "qrm-scheduler-extender";

int Fail(int code, const Status& status) {
  std::fprintf(stderr, "%s: %s\n", kProgram, status.message().c_str());
  return code;
}

StatusOr<kube::KubeClient> MakeClient(const ExtenderConfig& config) {
  QRM_ASSIGN_OR_RETURN(kube::ClusterConfig cluster, kube::LoadClusterConfig(config.kubeconfig));
  return kube::KubeClient::Create(std::move(cluster));
}

int Serve(const ExtenderConfig& config, const sigset_t& stop) {
  auto log = Logger("extender");
  StatusOr<kube::KubeClient> client = MakeClient(config);
  if (!client.ok()) return Fail(2, client.status());
  auto service = cluster::scheduler::ExtenderService::Create(config.load_aware);
  if (!service.ok()) return Fail(2, service.status());
  cluster::scheduler::ExtenderInformers informers(*client, **service, config.informers);
  informers.Start();
  const auto started = std::chrono::steady_clock::now();
  const auto ready = [&] {
    return informers.Synced() || std::chrono::steady_clock::now() - started > config.sync_timeout;
  };
  http::HttpServer server(config.address,
                          cluster::scheduler::ExtenderRoutes(**service, *client, informers, ready),
                          http::ServerOptions{.address_key = "address"});
  if (Status s = server.Start(); !s.ok()) return Fail(1, s);
  std::unique_ptr<http::HttpServer> webhook_server;
  if (!config.webhook_address.empty()) {
    http::ServerOptions options;
    options.tls = http::TlsFiles{config.webhook_cert_file, config.webhook_key_file};
    options.address_key = "webhook-address";
    webhook_server = std::make_unique<http::HttpServer>(
        config.webhook_address, webhook::WebhookRoutes(config.webhook), options);
    if (Status s = webhook_server->Start(); !s.ok()) return Fail(1, s);
  }
  log->info("serving the extender on {} (API server {})", config.address, client->config().server);
  const int sig = WaitForStopSignal(stop);
  log->info("received {}, stopping", StopSignalName(sig));
  if (webhook_server) webhook_server->Stop();
  server.Stop();
  informers.Stop();
  return 0;
}

int Run(int argc, char** argv) {
  ExtenderFlags flags;
  auto parsed = config::Parse(argc, argv, flags.description());
  if (!parsed.ok()) return Fail(2, parsed.status());
  if (parsed->exit) {
    std::fputs(parsed->output.c_str(), stdout);
    return 0;
  }
  auto config = flags.Finish();
  if (!config.ok()) return Fail(2, config.status());
  if (parsed->check_only) {
    std::fputs(config::CheckConfigOk(kProgram, "no machine state read").c_str(), stdout);
    return 0;
  }
  if (!ConfigureLogging(config->log_level, config->log_format)) {
    return Fail(2, InvalidArgumentError("log-level or log-format not understood"));
  }
  return Serve(*config, BlockStopSignals());  // before any thread starts: they inherit it
}

}  // namespace
}  // namespace qrm::extender_cmd

int main(int argc, char** argv) {
  return qrm::extender_cmd::Run(argc, argv);
}
