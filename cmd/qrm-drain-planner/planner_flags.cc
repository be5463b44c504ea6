#include "cmd/qrm-drain-planner/planner_flags.h"

#include <charconv>

#include <fmt/format.h>

#include "cluster/objects/meta_time.h"
#include "common/config/config.h"
#include "common/log.h"
#include "common/quote.h"
#include "qos/qos_requirement.h"

namespace po = boost::program_options;

namespace qrm::drain_cmd {
namespace {

StatusOr<int64_t> ParseGroupSize(const std::string& entry, std::string* group) {
  const size_t eq = entry.rfind('=');
  int64_t size = -1;
  if (eq != std::string::npos && eq > 0) {
    const char* end = entry.data() + entry.size();
    auto [ptr, ec] = std::from_chars(entry.data() + eq + 1, end, size);
    if (ec != std::errc() || ptr != end) size = -1;
  }
  if (size < 0) {
    return InvalidArgumentError(
        fmt::format("node-group-min-size {}: expected GROUP=N with N >= 0", Quote(entry)));
  }
  *group = entry.substr(0, eq);
  return size;
}

int64_t Seconds(std::chrono::milliseconds d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d).count();
}

}  // namespace

PlannerFlags::PlannerFlags(bool execute) {
  values_.execute = execute;
  AddPlanFlags();
  AddDrainRuleFlags();
  AddExecuteFlags();
  if (execute) desc_.add(execute_desc_);
}

void PlannerFlags::AddPlanFlags() {
  PlannerConfig& v = values_;
  cluster::drain::PlannerOptions& p = v.planner;
  auto add = desc_.add_options();
  add("input", po::value(&v.inputs)->composing()->default_value({}, ""),
      "a `kubectl get -o json` file: NodeList, PodList, PodDisruptionBudgetList, "
      "NodeResourceTopologyList or a List of them (repeatable; - is stdin); none: read the API "
      "server");
  add("kubeconfig", po::value(&v.kubeconfig)->default_value(v.kubeconfig),
      "cluster configuration without --input (\"\": $KUBECONFIG, the pod's service account, "
      "~/.kube/config)");
  add("node-group-label", po::value(&v.decode.node_group_label)->default_value(""),
      "the node label whose value is the node's group (e.g. eks.amazonaws.com/nodegroup)");
  add("roles", po::value(&roles_json_)->default_value(""),
      "the role table JSON of qrm-host and the plugins (docs/annotations.md): pods with a role "
      "resolve through it as on the nodes");
  add("roles-file", po::value(&roles_file_)->default_value(""),
      "file holding the role table JSON (the file qrm-host's and the plugins' --roles-file name)");
  add("node-group-min-size", po::value(&min_sizes_)->composing()->default_value({}, ""),
      "GROUP=N: the group keeps at least N nodes (repeatable)");
  add("numa-blind", po::bool_switch(&p.numa_blind),
      "plan as the Cluster Autoscaler does, without qrm's NUMA admission, and list the pods "
      "that plan strands");
  add("compare", po::bool_switch(&v.compare),
      "plan both ways and show what the NUMA-blind plan strands that qrm's does not");
  add("max-scale-down-parallelism",
      po::value(&p.max_scale_down_parallelism)->default_value(p.max_scale_down_parallelism),
      "nodes deleted at once, empty or not, counting those being deleted");
  add("max-drain-parallelism",
      po::value(&p.max_drain_parallelism)->default_value(p.max_drain_parallelism),
      "non-empty nodes drained at once, counting those being drained");
  add("scale-down-utilization-threshold",
      po::value(&p.eligibility.utilization_threshold)
          ->default_value(p.eligibility.utilization_threshold),
      "nodes whose requested cpu or memory share is above this are not candidates");
  add("scale-down-simulation-timeout",
      po::value(&simulation_timeout_)->default_value(simulation_timeout_),
      "the simulation's time budget; candidates not reached are reported so");
  add("ignore-daemonsets-utilization",
      po::bool_switch(&p.eligibility.ignore_daemonsets_utilization),
      "leave daemonset pods out of the utilisation");
  add("ignore-mirror-pods-utilization",
      po::bool_switch(&p.eligibility.ignore_mirror_pods_utilization),
      "leave static (mirror) pods out of the utilisation");
  add("recent-eviction-window",
      po::value(&recent_eviction_window_)->default_value(recent_eviction_window_),
      "an evicted pod (from --state) is placed again until its replacement runs or this passed");
  add("now", po::value(&now_)->default_value(""),
      "the time the rules compare with, RFC 3339 (\"\": the clock; set it to replay a dump)");
  add("drain-taint", po::value(&v.execution.taint_key)->default_value(v.execution.taint_key),
      "the NoSchedule taint key execute puts on a node it drains (nodes with it are being "
      "drained)");
  add("state", po::value(&v.state_file)->default_value(""),
      "a file kept between passes: destination hints, nodes being drained, recent evictions");
  add("output", po::value(&v.output)->default_value(v.output), "table or json");
  add("log-level", po::value(&v.log_level)->default_value(v.log_level), "trace..off");
  add("log-format", po::value(&v.log_format)->default_value(v.log_format), "text or json");
}

void PlannerFlags::AddDrainRuleFlags() {
  cluster::drain::DrainOptions& d = values_.planner.drain;
  auto add = desc_.add_options();
  add("skip-nodes-with-system-pods",
      po::value(&d.skip_nodes_with_system_pods)->default_value(d.skip_nodes_with_system_pods),
      "kube-system pods without a PDB keep their node");
  add("skip-nodes-with-local-storage",
      po::value(&d.skip_nodes_with_local_storage)->default_value(d.skip_nodes_with_local_storage),
      "pods with emptyDir or hostPath volumes keep their node");
  add("skip-nodes-with-custom-controller-pods",
      po::value(&d.skip_nodes_with_custom_controller_pods)
          ->default_value(d.skip_nodes_with_custom_controller_pods),
      "pods of controllers other than ReplicationController, Job, ReplicaSet and StatefulSet "
      "keep their node");
  add("block-unreplicated-pods",
      po::value(&d.block_unreplicated_pods)->default_value(d.block_unreplicated_pods),
      "pods without a controller keep their node (false: moved, as kubectl drain --force)");
  add("min-replica-count", po::value(&d.min_replica_count)->default_value(d.min_replica_count),
      "a ReplicationController or ReplicaSet with fewer replicas keeps its pods' nodes");
  add("blocking-system-pod-distruption-timeout",
      po::value(&bsp_timeout_)->default_value(bsp_timeout_),
      "a blocking kube-system pod older than this no longer blocks (CA's flag name)");
}

void PlannerFlags::AddExecuteFlags() {
  cluster::drain::ExecuteOptions& e = values_.execution;
  auto add = execute_desc_.add_options();
  add("retry-interval", po::value(&retry_interval_)->default_value(retry_interval_),
      "between two tries of an eviction a PodDisruptionBudget refused (429), and two reads "
      "of the evicted pods waited for");
  add("eviction-timeout", po::value(&eviction_timeout_)->default_value(eviction_timeout_),
      "how long a node's evictions are tried before it is reported incomplete");
  add("dry-run", po::bool_switch(&e.dry_run),
      "cordon nothing; send the evictions with dryRun so the API server only checks them");
  add("grace-period", po::value(&grace_period_)->default_value(grace_period_),
      "seconds each evicted pod gets to stop (-1: the pod's own)");
  add("max-graceful-termination-sec",
      po::value(&max_graceful_termination_sec_)->default_value(max_graceful_termination_sec_),
      "how long, plus 30 s, a node's evicted pods are waited for to leave it before the node is "
      "reported incomplete (CA's flag name); 0: not waited for");
}

Status PlannerFlags::FinishPlanner(PlannerConfig& c) const {
  cluster::drain::PlannerOptions& p = c.planner;
  QRM_ASSIGN_OR_RETURN(p.time_budget,
                       config::ParseDuration(simulation_timeout_, "scale-down-simulation-timeout"));
  QRM_ASSIGN_OR_RETURN(std::chrono::milliseconds window,
                       config::ParseDuration(recent_eviction_window_, "recent-eviction-window"));
  p.recent_eviction_window_seconds = Seconds(window);
  QRM_ASSIGN_OR_RETURN(
      std::chrono::milliseconds bsp,
      config::ParseDuration(bsp_timeout_, "blocking-system-pod-distruption-timeout"));
  p.drain.bsp_disruption_timeout_seconds = Seconds(bsp);
  if (p.drain.min_replica_count < 0) {
    return InvalidArgumentError(
        fmt::format("min-replica-count {}: must be 0 or more", p.drain.min_replica_count));
  }
  for (const std::string& entry : min_sizes_) {
    std::string group;
    QRM_ASSIGN_OR_RETURN(int64_t size, ParseGroupSize(entry, &group));
    p.eligibility.min_group_size[group] = size;
  }
  QRM_ASSIGN_OR_RETURN(c.decode.roles, qos::LoadRoleTable(roles_json_, roles_file_));
  if (!min_sizes_.empty() && c.decode.node_group_label.empty()) {
    return InvalidArgumentError(
        "node-group-min-size: needs node-group-label (which label names "
        "a node's group)");
  }
  if (c.execution.taint_key.empty()) {
    return InvalidArgumentError("drain-taint \"\": must not be empty");
  }
  p.drain_taints.push_back(c.execution.taint_key);
  if (now_.empty()) {
    p.now = std::chrono::duration_cast<std::chrono::seconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  } else {
    StatusOr<int64_t> now = cluster::ParseTime(now_);
    if (!now.ok()) {
      return InvalidArgumentError(fmt::format("now {}: {}", Quote(now_), now.status().message()));
    }
    p.now = *now;
  }
  return Status::Ok();
}

Status PlannerFlags::FinishExecute(PlannerConfig& c) const {
  cluster::drain::ExecuteOptions& e = c.execution;
  QRM_ASSIGN_OR_RETURN(e.retry_interval, config::ParseDuration(retry_interval_, "retry-interval"));
  QRM_ASSIGN_OR_RETURN(e.eviction_timeout,
                       config::ParseDuration(eviction_timeout_, "eviction-timeout"));
  if (grace_period_ < -1) {
    return InvalidArgumentError(
        fmt::format("grace-period {}: expected -1 or a number of seconds", grace_period_));
  }
  if (grace_period_ >= 0) e.grace_period_seconds = grace_period_;
  if (max_graceful_termination_sec_ < 0) {
    return InvalidArgumentError(
        fmt::format("max-graceful-termination-sec {}: expected 0 or a number of seconds",
                    max_graceful_termination_sec_));
  }
  // CA waits this long plus its pod eviction headroom (30 s) for the pods to go.
  e.termination_timeout = max_graceful_termination_sec_ == 0
                              ? std::chrono::milliseconds(0)
                              : std::chrono::seconds(max_graceful_termination_sec_ + 30);
  if (!c.inputs.empty()) {
    return InvalidArgumentError(
        "input: execute reads the cluster from the API server, not from "
        "files (plan with --input to try a dump)");
  }
  if (c.compare) return InvalidArgumentError("compare: only for plan");
  e.parallelism = std::max(1, c.planner.max_drain_parallelism);
  return Status::Ok();
}

StatusOr<PlannerConfig> PlannerFlags::Finish() const {
  PlannerConfig c = values_;
  QRM_RETURN_IF_ERROR(config::CheckLogFlags(c.log_level, c.log_format));
  if (c.output != "table" && c.output != "json") {
    return InvalidArgumentError(fmt::format("output {}: expected table or json", Quote(c.output)));
  }
  QRM_RETURN_IF_ERROR(FinishPlanner(c));
  if (c.execute) QRM_RETURN_IF_ERROR(FinishExecute(c));
  return c;
}

}  // namespace qrm::drain_cmd
