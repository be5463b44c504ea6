// qrm-drain-planner: which nodes can be drained together and where each pod would go, with
// qrm's NUMA admission in the simulation (docs/drain.md).
//
//   qrm-drain-planner plan [--input FILE]... [--numa-blind | --compare] [flags]
//   qrm-drain-planner execute [flags]
//
// plan reads `kubectl get -o json` files (offline) or the API server (live) and prints the
// plan; execute plans from the API server, then cordons the chosen nodes and evicts their pods.
// Exit status: 0 done, 1 an execute left a node incomplete or a runtime failure, 2 bad flags or
// input (nothing was planned or changed).
#include <csignal>
#include <cstdio>
#include <optional>
#include <sstream>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <pthread.h>

#include "cluster/drain/executor.h"
#include "cluster/drain/plan_output.h"
#include "cluster/drain/planner.h"
#include "cluster/kube/kube_client.h"
#include "cluster/kube/kube_config.h"
#include "cmd/qrm-drain-planner/planner_flags.h"
#include "cmd/qrm-drain-planner/planner_inputs.h"
#include "common/config/config.h"
#include "common/log.h"
#include "common/stop_signals.h"

namespace qrm::drain_cmd {
namespace {

namespace drain = cluster::drain;

constexpr const char* kProgram = "qrm-drain-planner";
constexpr const char* kUsage =
    "usage: qrm-drain-planner plan [--input FILE]... [flags]   plan, print, change nothing\n"
    "       qrm-drain-planner execute [flags]                  plan from the API server, then\n"
    "                                                          cordon and evict\n"
    "       qrm-drain-planner (plan|execute) --help            the flags of a command\n";

int Fail(int code, const Status& status) {
  std::fprintf(stderr, "%s: %s\n", kProgram, status.message().c_str());
  return code;
}

StatusOr<kube::KubeClient> MakeClient(const PlannerConfig& config) {
  QRM_ASSIGN_OR_RETURN(kube::ClusterConfig cluster, kube::LoadClusterConfig(config.kubeconfig));
  return kube::KubeClient::Create(std::move(cluster));
}

void Print(const PlannerConfig& config, const drain::Plan& plan) {
  const std::string text = config.output == "json" ? drain::PlanJson(plan) : drain::PlanTable(plan);
  std::fputs(text.c_str(), stdout);
}

// {"<first>": <a>, "<second>": <b>} from two JSON documents (each ends in a newline).
void PrintJsonPair(std::string_view first, std::string a, std::string_view second, std::string b) {
  a.pop_back();
  b.pop_back();
  std::fputs(fmt::format("{{\"{}\":{},\"{}\":{}}}\n", first, a, second, b).c_str(), stdout);
}

// The state the next pass starts from: this plan's hints, the nodes being drained that still
// exist (a node that is gone has finished), evictions still within the window.
drain::PlannerState NextState(drain::PlannerState state, const drain::Plan& plan,
                              const PlannerInput& in, const drain::PlannerOptions& options) {
  state.destination_hints = plan.destination_hints;
  std::erase_if(state.deleted_nodes,
                [&](const std::string& node) { return !in.snapshot.node_index.contains(node); });
  std::erase_if(state.recent_evictions, [&](const drain::RecentEviction& e) {
    return options.now - e.evicted_at > options.recent_eviction_window_seconds;
  });
  return state;
}

int Compare(const PlannerConfig& config, const PlannerInput& in, const drain::PlannerState& state) {
  drain::PlannerOptions options = config.planner;
  options.numa_blind = true;
  StatusOr<drain::Plan> blind = drain::MakePlan(in.snapshot, in.numa, options, state);
  if (!blind.ok()) return Fail(2, blind.status());
  options.numa_blind = false;
  StatusOr<drain::Plan> aware = drain::MakePlan(in.snapshot, in.numa, options, state);
  if (!aware.ok()) return Fail(2, aware.status());
  if (config.output == "json") {
    PrintJsonPair("numaBlind", drain::PlanJson(*blind), "numaAware", drain::PlanJson(*aware));
  } else {
    std::fputs((drain::PlanTable(*blind) + "\n" + drain::PlanTable(*aware) + "\n" +
                drain::ComparisonTable(*blind, *aware))
                   .c_str(),
               stdout);
  }
  return 0;
}

std::vector<drain::DrainTarget> TargetsOf(const drain::Plan& plan) {
  std::vector<drain::DrainTarget> targets;
  for (const auto* nodes : {&plan.delete_empty, &plan.drain}) {
    for (const drain::NodePlan& node : *nodes) {
      drain::DrainTarget target{node.node, {}};
      for (const drain::PodMove& move : node.moves) {
        const size_t slash = move.pod.find('/');
        target.pods.emplace_back(move.pod.substr(0, slash), move.pod.substr(slash + 1));
      }
      targets.push_back(std::move(target));
    }
  }
  return targets;
}

// Nodes being drained and the pods evicted go into the state, so the next pass places those
// pods first and leaves those nodes alone.
void RecordExecution(const drain::ExecuteReport& report, const PlannerInput& in, int64_t now,
                     drain::PlannerState& state) {
  for (const drain::NodeExecution& node : report.nodes) {
    if (node.cordoned) state.deleted_nodes.insert(node.node);
    for (const drain::PodEvictionReport& pod : node.pods) {
      if (pod.outcome != kube::EvictionOutcome::kEvicted) continue;
      auto it = in.snapshot.pod_index.find(pod.pod);
      if (it != in.snapshot.pod_index.end()) {
        state.recent_evictions.push_back({in.snapshot.pods[it->second], now});
      }
    }
  }
}

// SIGINT / SIGTERM end the evictions' waits (the nodes are reported as they are).
drain::ExecuteReport ExecuteWithSignals(const kube::KubeClient& client,
                                        const std::vector<drain::DrainTarget>& targets,
                                        const drain::ExecuteOptions& options, sigset_t stop) {
  std::stop_source source;
  std::jthread waiter([&](std::stop_token done) {
    timespec tick{0, 100'000'000};
    while (!done.stop_requested()) {
      if (sigtimedwait(&stop, nullptr, &tick) > 0) {
        source.request_stop();
        return;
      }
    }
  });
  drain::ExecuteReport report = drain::ExecuteDrains(client, targets, options, source.get_token());
  waiter.request_stop();
  return report;
}

int Execute(const PlannerConfig& config, const kube::KubeClient& client, const PlannerInput& in,
            drain::PlannerState state, const drain::Plan& plan, sigset_t stop) {
  drain::ExecuteReport report = ExecuteWithSignals(client, TargetsOf(plan), config.execution, stop);
  state = NextState(std::move(state), plan, in, config.planner);
  if (!config.execution.dry_run) RecordExecution(report, in, config.planner.now, state);
  if (config.output == "json") {
    PrintJsonPair("plan", drain::PlanJson(plan), "execution", drain::ExecutionJson(report));
  } else {
    std::fputs((drain::PlanTable(plan) + drain::ExecutionTable(report)).c_str(), stdout);
  }
  if (!config.state_file.empty() && !config.execution.dry_run) {
    if (Status s = WriteStateFile(config.state_file, state); !s.ok()) return Fail(1, s);
  }
  return report.complete() ? 0 : 1;
}

int PlanAndAct(const PlannerConfig& config, sigset_t stop) {
  std::optional<kube::KubeClient> client;
  if (config.inputs.empty()) {
    StatusOr<kube::KubeClient> made = MakeClient(config);
    if (!made.ok()) return Fail(2, made.status());
    client.emplace(*std::move(made));
  }
  StatusOr<PlannerInput> in = ReadPlannerInput(config, client ? &*client : nullptr);
  if (!in.ok()) return Fail(2, in.status());
  drain::PlannerState state;
  if (!config.state_file.empty()) {
    StatusOr<drain::PlannerState> read = ReadStateFile(config.state_file);
    if (!read.ok()) return Fail(2, read.status());
    state = *std::move(read);
  }
  if (config.compare) return Compare(config, *in, state);
  StatusOr<drain::Plan> plan = drain::MakePlan(in->snapshot, in->numa, config.planner, state);
  if (!plan.ok()) return Fail(2, plan.status());
  if (config.execute) return Execute(config, *client, *in, std::move(state), *plan, stop);
  Print(config, *plan);
  if (!config.state_file.empty()) {
    Status s =
        WriteStateFile(config.state_file, NextState(std::move(state), *plan, *in, config.planner));
    if (!s.ok()) return Fail(1, s);
  }
  return 0;
}

int Run(int argc, char** argv) {
  const std::string_view command = argc > 1 ? argv[1] : "";
  if (command == "--help" || command == "-h" || command == "help") {
    // The usage and every flag (execute takes plan's but --input and --compare, and its own).
    PlannerFlags flags(false);
    std::ostringstream help;
    help << kUsage << "\n" << flags.description() << "\n" << flags.execute_description();
    std::fputs(help.str().c_str(), stdout);
    return 0;
  }
  if (command != "plan" && command != "execute") {
    std::fputs(kUsage, stderr);
    return Fail(
        2, InvalidArgumentError(command.empty() ? "a command is needed"
                                                : fmt::format("unknown command \"{}\"", command)));
  }
  PlannerFlags flags(command == "execute");
  auto parsed = config::Parse(argc - 1, argv + 1, flags.description());
  if (!parsed.ok()) return Fail(2, parsed.status());
  if (parsed->exit) {
    std::fputs(parsed->output.c_str(), stdout);
    return 0;
  }
  auto config = flags.Finish();
  if (!config.ok()) return Fail(2, config.status());
  if (parsed->check_only) {
    std::fputs(config::CheckConfigOk(kProgram, "no cluster state read").c_str(), stdout);
    return 0;
  }
  ConfigureLogging(config->log_level, config->log_format);
  // Only execute waits for them (its evictions' waits end at a signal); plan just ends.
  sigset_t stop;
  sigemptyset(&stop);
  if (config->execute) stop = BlockStopSignals();  // before threads start: they inherit it
  return PlanAndAct(*config, stop);
}

}  // namespace
}  // namespace qrm::drain_cmd

int main(int argc, char** argv) {
  return qrm::drain_cmd::Run(argc, argv);
}
