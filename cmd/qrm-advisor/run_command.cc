// `qrm-advisor [flags]`: the node advisor daemon (docs/advisor.md, "The daemon").
//
// The main thread runs the sampling loop (one Agent::Tick per interval) and waits for
// SIGTERM/SIGINT between ticks with sigtimedwait, so a stop is seen within a tick and the
// models are checkpointed before exit. The gRPC service and /metrics run on their own threads
// and read the agent under its lock.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "advisor/agent/advisor_service.h"
#include "advisor/agent/agent.h"
#include "advisor/agent/agent_clock.h"
#include "advisor/agent/agent_metrics.h"
#include "advisor/agent/cri_evictor.h"
#include "advisor/agent/cri_runtime_source.h"
#include "advisor/agent/guard_runner.h"
#include "advisor/agent/host_throttles.h"
#include "advisor/agent/kube_evictor.h"
#include "advisor/agent/node_reporter.h"
#include "advisor/sample/cgroup_usage.h"
#include "advisor/sample/node_usage.h"
#include "advisor/state/model_checkpointer.h"
#include "cluster/kube/kube_config.h"
#include "cmd/qrm-advisor/commands.h"
#include "cmd/qrm-advisor/daemon_config.h"
#include "common/config/config.h"
#include "common/http/http_server.h"
#include "common/log.h"
#include "common/malloc_tuning.h"
#include "common/metrics/metrics.h"
#include "common/stop_signals.h"

namespace qrm::advisor_cmd {

namespace {

using Clock = std::chrono::steady_clock;

class HostAdminSource : public advisor::HostSource {
 public:
  HostAdminSource(const std::string& socket, std::chrono::milliseconds timeout)
      : client_(socket, timeout) {}
  StatusOr<advisor::HostView> Fetch() override { return client_.Fetch(); }

 private:
  advisor::HostClient client_;
};

// The models' checkpointers; they refer to the models, which the agent owns from Start on.
struct Checkpoints {
  std::vector<std::unique_ptr<advisor::ModelCheckpointer>> all;
  void Restore() {
    for (auto& c : all) c->Restore();
  }
  void MaybeSave(int64_t now) {
    for (auto& c : all) (void)c->MaybeSave(now);  // failures are logged and counted
  }
  void Save(int64_t now) {
    for (auto& c : all) (void)c->Save(now);
  }
};

Checkpoints MakeCheckpoints(const DaemonConfig& config, advisor::Predictors& p) {
  Checkpoints out;
  if (config.state_dir.empty()) return out;
  advisor::CheckpointerOptions o;
  o.dir = config.state_dir;
  o.save_interval_s = config.checkpoint_interval_s;
  out.all.push_back(std::make_unique<advisor::ModelCheckpointer>(p.cpu(), "cpu", o));
  out.all.push_back(std::make_unique<advisor::ModelCheckpointer>(p.memory(), "memory", o));
  if (p.pool() != nullptr) {
    out.all.push_back(std::make_unique<advisor::ModelCheckpointer>(*p.pool(), "pool", o));
  }
  return out;
}

void AddCheckpointMetrics(const Checkpoints& c, const advisor::Agent& agent) {
  metrics::Default().AddCollector([&c, &agent](std::string& out) {
    advisor::AppendAgentMetrics(agent, out);
    out +=
        "# HELP qrm_advisor_checkpoint_writes_total Model checkpoint writes.\n"
        "# TYPE qrm_advisor_checkpoint_writes_total counter\n";
    agent.Read([&](auto&&...) {  // the checkpointers are used under the agent's lock
      for (const auto& cp : c.all) {
        const std::string labels =
            fmt::format("scope=\"{}\",model=\"{}\"", cp->scope(), cp->model_name());
        out += fmt::format("qrm_advisor_checkpoint_writes_total{{{},result=\"ok\"}} {}\n", labels,
                           cp->writes());
        out += fmt::format("qrm_advisor_checkpoint_writes_total{{{},result=\"error\"}} {}\n",
                           labels, cp->write_failures());
      }
      return 0;
    });
  });
}

// The evictor of mode "api": the Kubernetes client from --kubeconfig, $KUBECONFIG, the pod's
// service account or ~/.kube/config; why not, when none applies.
StatusOr<std::unique_ptr<advisor::guard::Evictor>> ApiEvictor(const DaemonConfig& config) {
  QRM_ASSIGN_OR_RETURN(kube::ClusterConfig cluster, kube::LoadClusterConfig(config.kubeconfig));
  QRM_ASSIGN_OR_RETURN(kube::KubeClient client, kube::KubeClient::Create(std::move(cluster)));
  return std::unique_ptr<advisor::guard::Evictor>(
      std::make_unique<advisor::KubeEvictor>(std::move(client)));
}

// The guard with an evictor for every mode this node can serve: "cri" always (the runtime is
// configured), "api" when a cluster configuration is found. A policy whose mode has no evictor
// is refused at start (a reload to it later is logged and walked as previews).
StatusOr<std::unique_ptr<advisor::GuardRunner>> MakeGuard(const DaemonConfig& config) {
  advisor::Evictors evictors;
  // A stop waits for the containers to exit (the runtime's own grace period): the loop waits
  // at most this long per pod.
  evictors[advisor::guard::EvictMode::kCri] =
      std::make_unique<advisor::CriEvictor>(config.runtime_endpoint, std::chrono::seconds(30));
  auto api = ApiEvictor(config);
  if (api.ok()) {
    evictors[advisor::guard::EvictMode::kApi] = std::move(*api);
  } else {
    Logger("guard")->info("eviction mode api unavailable: {}", api.status().message());
  }
  const bool has_api = evictors.contains(advisor::guard::EvictMode::kApi);
  auto guard = std::make_unique<advisor::GuardRunner>(
      config.guard,
      std::make_unique<advisor::HostThrottles>(config.admin_socket, config.host_timeout),
      std::move(evictors));
  QRM_RETURN_IF_ERROR(guard->Start());
  if (guard->policy().eviction.mode == advisor::guard::EvictMode::kApi && !has_api) {
    return FailedPreconditionError(fmt::format(
        "guard policy {}: eviction mode api needs a cluster configuration (--kubeconfig, "
        "$KUBECONFIG, the service account or ~/.kube/config): {}",
        config.guard.policy_file, api.status().message()));
  }
  return guard;
}

// The node report; with --publish-node-report a cluster configuration is required (a report
// that was asked for and cannot be written is a configuration error, not a silent no-op).
StatusOr<std::unique_ptr<advisor::NodeReporter>> MakeReporter(const DaemonConfig& config) {
  std::optional<kube::KubeClient> client;
  if (config.publish_node_report) {
    auto cluster = kube::LoadClusterConfig(config.kubeconfig);
    if (!cluster.ok()) {
      return FailedPreconditionError(fmt::format(
          "publish-node-report needs a cluster configuration (--kubeconfig, $KUBECONFIG, the "
          "service account or ~/.kube/config): {}",
          cluster.status().message()));
    }
    QRM_ASSIGN_OR_RETURN(kube::KubeClient made, kube::KubeClient::Create(std::move(*cluster)));
    client = std::move(made);
  }
  Logger("node-report")
      ->info(
          "node={}: NodeMetric and NodeResourceTopology served on /apis/nodemetric and "
          "/apis/noderesourcetopology{}",
          config.report.node_name,
          client ? fmt::format(", written to {} (NodeMetric every {}s)", client->config().server,
                               config.report.schedule.interval_s)
                 : "");
  auto host = std::make_shared<advisor::HostClient>(config.admin_socket, config.host_timeout);
  return std::make_unique<advisor::NodeReporter>(config.report, std::move(client),
                                                 [host] { return host->FetchAnswers(); });
}

// GET /apis/nodemetric and /apis/noderesourcetopology: the objects as last built.
http::Handler ObjectRoute(std::function<std::string()> json, std::string missing) {
  return [json = std::move(json), missing = std::move(missing)] {
    http::Response r;
    r.body = json();
    if (r.body.empty()) {
      r.status = 503;
      r.body = missing;
      return r;
    }
    r.content_type = "application/json";
    return r;
  };
}

bool Ready(const advisor::Agent& agent, advisor::AgentClock& clock) {
  const int64_t now = clock.Now();
  return agent.Read([now](const advisor::AgentState& s, auto&&...) {
    return s.last_node_sample > 0 && now - s.last_node_sample <= 15;
  });
}

// Ticks until SIGTERM/SIGINT (blocked in every thread, taken here with sigtimedwait).
void Loop(advisor::Agent& agent, advisor::GuardRunner* guard, advisor::NodeReporter& reporter,
          advisor::AgentClock& clock, Checkpoints& checkpoints, const DaemonConfig& config,
          const sigset_t& stop) {
  const auto interval = std::chrono::seconds(config.agent.store.ring.interval_s);
  auto next = Clock::now();
  for (;;) {
    const int64_t now = clock.Now();
    agent.Tick(now, Clock::now().time_since_epoch().count());
    if (guard != nullptr) guard->Round(agent, now);  // right after the sample it acts on
    reporter.Tick(agent, now);
    agent.WithModels([&](advisor::Predictors&) { checkpoints.MaybeSave(now); });
    // A checkpoint builds each model's whole document (MiBs at 1,000 pods) and a step
    // reshapes per-pod buffers: hand the freed pages back once a minute (bench P10_rss).
    if (now % 60 == 0) ReleaseFreeMemory();
    next += interval;
    if (next < Clock::now()) next = Clock::now();  // a slow tick: no burst of catch-up ticks
    const auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(next - Clock::now());
    timespec ts{static_cast<time_t>(wait.count() / 1000000000),
                static_cast<long>(wait.count() % 1000000000)};
    const int sig = sigtimedwait(&stop, nullptr, &ts);
    if (sig == SIGTERM || sig == SIGINT) {
      Logger("advisor")->info("signal {}: stopping", sig);
      return;
    }
  }
}

int Serve(const DaemonConfig& config, const sigset_t& stop) {
  advisor::AgentClock clock;
  advisor::AgentOptions agent_options = config.agent;
  agent_options.monotonic_ns = [] { return Clock::now().time_since_epoch().count(); };
  auto predictors = advisor::Predictors::Make(config.predictors);
  if (!predictors.ok()) {
    std::fprintf(stderr, "qrm-advisor: %s\n", predictors.status().message().c_str());
    return 2;
  }
  Checkpoints checkpoints = MakeCheckpoints(config, *predictors);
  checkpoints.Restore();
  advisor::Agent agent(
      agent_options, std::move(*predictors),
      std::make_unique<HostAdminSource>(config.admin_socket, config.host_timeout),
      std::make_unique<advisor::CriRuntimeSource>(config.runtime_endpoint, config.discover));
  std::unique_ptr<advisor::GuardRunner> guard;
  if (!config.guard.policy_file.empty()) {
    auto made = MakeGuard(config);
    if (!made.ok()) {
      std::fprintf(stderr, "qrm-advisor: %s\n", made.status().message().c_str());
      return 2;
    }
    guard = std::move(*made);
  }
  auto reporter = MakeReporter(config);
  if (!reporter.ok()) {
    std::fprintf(stderr, "qrm-advisor: %s\n", reporter.status().message().c_str());
    return 2;
  }
  advisor::AdvisorServer server(config.server, agent, config.agent.pools.control_file, guard.get(),
                                reporter->get());
  if (Status s = server.Start(); !s.ok()) {
    Logger("advisor")->error("cannot serve {}: {}", config.server.socket, s.ToString());
    return 1;
  }
  AddCheckpointMetrics(checkpoints, agent);
  std::unique_ptr<http::HttpServer> http;
  if (!config.metrics_address.empty()) {
    auto routes = http::StandardRoutes([&agent, &clock] { return Ready(agent, clock); });
    const advisor::NodeReporter& report = **reporter;
    routes["/apis/nodemetric"] = ObjectRoute([&report] { return report.Json(); },
                                             "no NodeMetric yet: the node has not been sampled\n");
    routes["/apis/noderesourcetopology"] =
        ObjectRoute([&report] { return report.TopologyJson(); },
                    "no NodeResourceTopology yet: qrm-host has not answered\n");
    http = std::make_unique<http::HttpServer>(config.metrics_address, std::move(routes));
    if (Status s = http->Start(); !s.ok()) {
      Logger("advisor")->error("metrics address {}: {}", config.metrics_address, s.ToString());
      return 1;
    }
  }
  Logger("advisor")->info("sampling every {}s (cgroup root {}, runtime {}, qrm-host {})",
                          config.agent.store.ring.interval_s, config.agent.sampler.cgroup_root,
                          config.runtime_endpoint, config.admin_socket);
  Loop(agent, guard.get(), **reporter, clock, checkpoints, config, stop);
  agent.WithModels([&](advisor::Predictors&) { checkpoints.Save(clock.Now()); });
  if (http) http->Stop();
  server.Stop();
  return 0;
}

// What --check-config reports of the machine: what the sampler will read. An unreadable
// procfs is no configuration error (the daemon samples what it can and counts the rest).
std::string MachineSummary(const DaemonConfig& config) {
  const auto version = advisor::DetectCgroupVersion(config.agent.sampler.cgroup_root);
  const auto node = advisor::ReadNodeCounters(config.agent.sampler.procfs_root);
  return fmt::format(
      "cgroup {} at {}, {}", version == advisor::CgroupVersion::kV2 ? "v2" : "v1",
      config.agent.sampler.cgroup_root,
      node.ok() ? fmt::format("{} CPUs in {}/stat", node->cpus, config.agent.sampler.procfs_root)
                : node.status().ToString());
}

}  // namespace

int RunDaemon(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"qrm-advisor"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  DaemonFlags flags;
  auto parsed = config::Parse(static_cast<int>(argv.size()), argv.data(), flags.description());
  if (!parsed.ok()) {
    std::fprintf(stderr, "qrm-advisor: %s\n", parsed.status().message().c_str());
    return 2;
  }
  if (parsed->exit) {
    std::fputs(parsed->output.c_str(), stdout);
    return 0;
  }
  auto config = flags.Finish();
  if (!config.ok()) {
    std::fprintf(stderr, "qrm-advisor: %s\n", config.status().message().c_str());
    return 2;
  }
  if (parsed->check_only) {
    std::fputs(config::CheckConfigOk("qrm-advisor", MachineSummary(*config)).c_str(), stdout);
    return 0;
  }
  if (!ConfigureLogging(config->log_level, config->log_format)) {
    std::fprintf(stderr, "qrm-advisor: log-level \"%s\" or log-format \"%s\" not understood\n",
                 config->log_level.c_str(), config->log_format.c_str());
    return 2;
  }
  TuneMalloc(1);  // before any thread: one arena, as qrm-host (common/malloc_tuning.h)
  return Serve(*config, BlockStopSignals());  // before any thread starts: they inherit it
}

}  // namespace qrm::advisor_cmd
