#include "cmd/qrm-advisor/daemon_config.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <unistd.h>

#include "cluster/kube/kube_names.h"
#include "common/config/config.h"
#include "common/log.h"
#include "common/quote.h"

namespace po = boost::program_options;

namespace qrm::advisor_cmd {

DaemonFlags::DaemonFlags() {
  AddSourceFlags();
  AddSamplingFlags();
  AddPoolFlags();
  AddGuardFlags();
  AddReportFlags();
}

void DaemonFlags::AddSourceFlags() {
  DaemonConfig& v = values_;
  auto add = desc_.add_options();
  add("runtime-endpoint", po::value(&v.runtime_endpoint)->default_value(v.runtime_endpoint),
      "the CRI runtime (containerd) that says which containers run and where their cgroups are");
  add("runtime-timeout", po::value(&runtime_timeout_)->default_value(runtime_timeout_),
      "per CRI call");
  add("admin-socket", po::value(&v.admin_socket)->default_value(v.admin_socket),
      "qrm-host's admin socket (container identity, QoS levels, dedicated CPUs)");
  add("host-timeout", po::value(&host_timeout_)->default_value(host_timeout_), "per admin call");
  add("socket", po::value(&v.server.socket)->default_value(v.server.socket),
      "the advisor's own socket (qrmctl usage, qrmctl prediction)");
  add("socket-allowed-uids", po::value(&allowed_uids_)->default_value(allowed_uids_),
      "users (names or ids) allowed on the advisor's socket");
  add("state-dir", po::value(&v.state_dir)->default_value(v.state_dir),
      "model checkpoints and the extended resources published (\"\": none)");
  add("checkpoint-interval", po::value(&checkpoint_interval_)->default_value(checkpoint_interval_),
      "at most one checkpoint of each model per interval");
  add("metrics-address", po::value(&v.metrics_address)->default_value(v.metrics_address),
      "IP:PORT for /metrics, /healthz, /readyz (\"\": none)");
  add("log-level", po::value(&v.log_level)->default_value(v.log_level), "trace..off");
  add("log-format", po::value(&v.log_format)->default_value(v.log_format), "text or json");
}

void DaemonFlags::AddSamplingFlags() {
  DaemonConfig& v = values_;
  auto add = desc_.add_options();
  add("cgroup-root",
      po::value(&v.agent.sampler.cgroup_root)->default_value(v.agent.sampler.cgroup_root),
      "where the cgroup hierarchies are mounted (v1 or v2, detected)");
  add("procfs-root",
      po::value(&v.agent.sampler.procfs_root)->default_value(v.agent.sampler.procfs_root),
      "/proc (node counters, a container's /proc/<pid>/cgroup)");
  add("sysfs-root", po::value(&sysfs_root_)->default_value(sysfs_root_),
      "accepted like every qrm binary; the advisor reads the machine from procfs");
  add("netns-dir", po::value(&netns_dir_)->default_value(netns_dir_),
      "accepted like every qrm binary; unused (no NICs)");
  add("interval", po::value(&interval_)->default_value(interval_),
      "sampling interval (whole seconds)");
  add("step", po::value(&step_)->default_value(step_),
      "the models' step (a multiple of the interval)");
  add("inventory-period", po::value(&inventory_period_)->default_value(inventory_period_),
      "how often the container list is refreshed from the runtime and qrm-host");
  add("stale-after", po::value(&stale_after_)->default_value(stale_after_),
      "inputs older than this stop pool decisions");
  add("raw-horizon", po::value(&raw_horizon_)->default_value(raw_horizon_),
      "raw samples kept per series");
  add("bucket", po::value(&bucket_)->default_value(bucket_), "downsampled bucket width");
  add("bucket-horizon", po::value(&bucket_horizon_)->default_value(bucket_horizon_),
      "downsampled history kept per series");
  add("series-gc-after", po::value(&gc_after_)->default_value(gc_after_),
      "series of containers gone this long are dropped");
  add("node-model", po::value(&v.predictors.node_model)->default_value(v.predictors.node_model),
      "peak model of the node (koordinator, nsigma-v1, nsigma-v2, borg-default, "
      "resource-central, adaptive, max:a+b)");
}

void DaemonFlags::AddPoolFlags() {
  DaemonConfig& v = values_;
  advisor::PoolControlOptions& p = v.agent.pools;
  p.control_file = "/var/lib/qrm/cpu/pools.json";
  auto add = desc_.add_options();
  add("pool-control-file", po::value(&p.control_file)->default_value(p.control_file),
      "the CPU plugin's pool control file (\"\": the advisor does not size pools)");
  add("pool-model", po::value(&v.predictors.pool_model)->default_value(v.predictors.pool_model),
      "peak model of the shared pool's usage, or none (recent usage only)");
  add("pool-period", po::value(&pool_period_)->default_value(pool_period_),
      "between pool decisions");
  add("min-shared-cpus",
      po::value(&p.sizer.min_shared_cpus)->default_value(p.sizer.min_shared_cpus),
      "smallest shared pool");
  add("min-reclaimed-cpus",
      po::value(&p.sizer.min_reclaimed_cpus)->default_value(p.sizer.min_reclaimed_cpus),
      "smallest reclaimed pool (kept before the shared minimum when both do not fit)");
  add("pool-max-grow", po::value(&p.sizer.max_grow)->default_value(p.sizer.max_grow),
      "CPUs the shared pool may grow per decision");
  add("pool-max-shrink", po::value(&p.sizer.max_shrink)->default_value(p.sizer.max_shrink),
      "CPUs the shared pool may shrink per decision");
  add("pool-shrink-interval", po::value(&shrink_interval_)->default_value(shrink_interval_),
      "no shrink sooner than this after the last change");
  add("pool-reactive-factor", po::value(&p.reactive_factor)->default_value(p.reactive_factor),
      "the shared pool holds at least this times its recent usage");
  add("pool-reactive-window", po::value(&reactive_window_)->default_value(reactive_window_),
      "recent usage: the p90 over this window");
  add("pool-margin-cores", po::value(&p.margin_cores)->default_value(p.margin_cores),
      "cores added to the need");
}

void DaemonFlags::AddGuardFlags() {
  DaemonConfig& v = values_;
  auto add = desc_.add_options();
  add("guard-policy", po::value(&v.guard.policy_file)->default_value(v.guard.policy_file),
      "the watermark guard's policy file (docs/guard.md; \"\": no guard); reloaded on change");
  add("guard-lease", po::value(&guard_lease_)->default_value(guard_lease_),
      "lease of each throttle at qrm-host, renewed at half: a guard that stops is undone "
      "after this");
  add("guard-stale-after", po::value(&guard_stale_after_)->default_value(guard_stale_after_),
      "a node sample older than this is missing: its ensurances do not act");
  add("kubeconfig", po::value(&v.kubeconfig)->default_value(v.kubeconfig),
      "for eviction mode api (\"\": the in-cluster service account)");
}

void DaemonFlags::AddReportFlags() {
  DaemonConfig& v = values_;
  auto add = desc_.add_options();
  add("node-name", po::value(&v.report.node_name)->default_value(v.report.node_name),
      "the Kubernetes node this is (the NodeMetric's name; \"\": $NODE_NAME, else the hostname)");
  add("publish-node-report",
      po::value(&v.publish_node_report)->default_value(v.publish_node_report),
      "write the NodeMetric to the Kubernetes API (cluster configuration as --kubeconfig); it is "
      "served on the metrics address at /apis/nodemetric either way");
  add("report-interval", po::value(&report_interval_)->default_value(report_interval_),
      "NodeMetric writes at least this often (30s to 600s; a controller's "
      "spec.metricCollectPolicy.reportIntervalSeconds overrides)");
  add("report-change",
      po::value(&v.report.schedule.change)->default_value(v.report.schedule.change),
      "write sooner when the node's CPU or memory usage moved more than this fraction of capacity");
  add("report-min-gap", po::value(&report_min_gap_)->default_value(report_min_gap_),
      "never two NodeMetric writes closer than this");
}

namespace {

// A duration flag in whole seconds (>= 1 unless `allow_zero`); errors name the key.
Status Seconds(const std::string& text, const char* key, int64_t& out, bool allow_zero = false) {
  auto d = config::ParseDuration(text, key);
  if (!d.ok()) return d.status();
  if (d->count() % 1000 != 0 || (d->count() == 0 && !allow_zero) || d->count() < 0) {
    return InvalidArgumentError(fmt::format("{} \"{}\": must be a whole number of seconds{}", key,
                                            text, allow_zero ? "" : ", at least 1s"));
  }
  out = d->count() / 1000;
  return Status::Ok();
}

// A timeout flag: a duration above 0.
StatusOr<std::chrono::milliseconds> Timeout(const std::string& text, const char* key) {
  auto d = config::ParseDuration(text, key);
  if (!d.ok()) return d.status();
  if (d->count() <= 0) {
    return InvalidArgumentError(fmt::format("{} \"{}\": must be above 0", key, text));
  }
  return *d;
}

// The pool numbers, named by their flags (the options' own checks name their fields) and
// bounded (a CPU count above the largest machine is a typo, and would overflow the sums).
Status CheckPoolNumbers(const advisor::PoolControlOptions& p) {
  constexpr int kMaxCpus = 8192;
  const std::pair<const char*, int> counts[] = {{"min-shared-cpus", p.sizer.min_shared_cpus},
                                                {"min-reclaimed-cpus", p.sizer.min_reclaimed_cpus},
                                                {"pool-max-grow", p.sizer.max_grow},
                                                {"pool-max-shrink", p.sizer.max_shrink}};
  for (const auto& [flag, value] : counts) {
    const int lowest = std::string_view(flag).starts_with("min-") ? 0 : 1;
    if (value < lowest || value > kMaxCpus) {
      return InvalidArgumentError(
          fmt::format("{} {}: must be from {} to {} CPUs", flag, value, lowest, kMaxCpus));
    }
  }
  if (!(p.reactive_factor >= 0 && p.reactive_factor <= 100)) {
    return InvalidArgumentError(
        fmt::format("pool-reactive-factor {}: must be from 0 to 100", p.reactive_factor));
  }
  if (!(p.margin_cores >= 0 && p.margin_cores <= kMaxCpus)) {
    return InvalidArgumentError(
        fmt::format("pool-margin-cores {}: must be from 0 to {}", p.margin_cores, kMaxCpus));
  }
  return Status::Ok();
}

}  // namespace

Status DaemonFlags::FinishDurations(DaemonConfig& c) const {
  advisor::RingOptions& ring = c.agent.store.ring;
  QRM_RETURN_IF_ERROR(Seconds(interval_, "interval", ring.interval_s));
  QRM_RETURN_IF_ERROR(Seconds(step_, "step", c.agent.step_s));
  if (c.agent.step_s % ring.interval_s != 0) {
    return InvalidArgumentError(
        fmt::format("step \"{}\": must be a multiple of interval \"{}\"", step_, interval_));
  }
  QRM_RETURN_IF_ERROR(Seconds(inventory_period_, "inventory-period", c.agent.inventory_period_s));
  QRM_RETURN_IF_ERROR(Seconds(stale_after_, "stale-after", c.agent.stale_after_s));
  if (c.agent.stale_after_s < c.agent.inventory_period_s) {
    // Inputs are refreshed every inventory period: a shorter limit would call them stale
    // between every two refreshes, and the pools would never be sized.
    return InvalidArgumentError(
        fmt::format("stale-after \"{}\": must be at least inventory-period \"{}\"", stale_after_,
                    inventory_period_));
  }
  QRM_RETURN_IF_ERROR(Seconds(raw_horizon_, "raw-horizon", ring.raw_horizon_s));
  QRM_RETURN_IF_ERROR(Seconds(bucket_, "bucket", ring.bucket_s));
  QRM_RETURN_IF_ERROR(Seconds(bucket_horizon_, "bucket-horizon", ring.bucket_horizon_s));
  QRM_RETURN_IF_ERROR(Seconds(gc_after_, "series-gc-after", c.agent.store.gc_after_s));
  QRM_RETURN_IF_ERROR(Seconds(checkpoint_interval_, "checkpoint-interval", c.checkpoint_interval_s,
                              /*allow_zero=*/true));
  QRM_RETURN_IF_ERROR(c.agent.store.Validate());
  auto host = Timeout(host_timeout_, "host-timeout");
  if (!host.ok()) return host.status();
  c.host_timeout = *host;
  auto runtime = Timeout(runtime_timeout_, "runtime-timeout");
  if (!runtime.ok()) return runtime.status();
  c.discover.rpc_timeout = *runtime;
  c.discover.procfs_root = c.agent.sampler.procfs_root;
  return Status::Ok();
}

Status DaemonFlags::FinishGuard(DaemonConfig& c) const {
  QRM_RETURN_IF_ERROR(Seconds(guard_lease_, "guard-lease", c.guard.lease_s));
  constexpr int64_t kMaxLease = 7 * 24 * 3600;  // what qrm-host accepts
  // Renewed at half, once per sample at best: at least 4 samples long.
  const int64_t shortest = std::max<int64_t>(2, 4 * c.agent.store.ring.interval_s);
  if (c.guard.lease_s < shortest || c.guard.lease_s > kMaxLease) {
    return InvalidArgumentError(
        fmt::format("guard-lease \"{}\": must be from {}s (4 x interval, renewed at half) to 7 "
                    "days",
                    guard_lease_, shortest));
  }
  QRM_RETURN_IF_ERROR(
      Seconds(guard_stale_after_, "guard-stale-after", c.guard.timings.stale_after_s));
  if (c.guard.timings.stale_after_s < c.agent.store.ring.interval_s) {
    return InvalidArgumentError(
        fmt::format("guard-stale-after \"{}\": must be at least interval \"{}\"",
                    guard_stale_after_, interval_));
  }
  return Status::Ok();
}

Status DaemonFlags::FinishReport(DaemonConfig& c) const {
  QRM_RETURN_IF_ERROR(Seconds(report_interval_, "report-interval", c.report.schedule.interval_s));
  QRM_RETURN_IF_ERROR(Seconds(report_min_gap_, "report-min-gap", c.report.schedule.min_gap_s));
  if (Status s = c.report.schedule.Validate(); !s.ok()) {
    return InvalidArgumentError(
        fmt::format("{} (report-interval \"{}\", report-change {}, "
                    "report-min-gap \"{}\")",
                    s.message(), report_interval_, c.report.schedule.change, report_min_gap_));
  }
  if (c.report.node_name.empty()) {
    const char* env = std::getenv("NODE_NAME");
    char host[256] = {};
    if (env != nullptr && *env != '\0') {
      c.report.node_name = env;
    } else if (gethostname(host, sizeof(host) - 1) == 0) {
      c.report.node_name = host;  // the kubelet's default node name is the hostname, lowercased
      for (char& ch : c.report.node_name) ch = static_cast<char>(std::tolower(ch));
    }
  }
  // What qrm published as the node's extended resources survives a restart in the state
  // directory (advisor/agent/extended_resource_publisher.h); without one it is kept in memory.
  if (!c.state_dir.empty()) {
    c.report.extended_resources_file = c.state_dir + "/node-extended-resources.json";
  }
  // Only an object written to the API must carry a valid name; the local report takes any.
  if (!c.publish_node_report) return Status::Ok();
  if (Status s = kube::ValidateObjectName(c.report.node_name, "node-name"); !s.ok()) {
    return InvalidArgumentError(
        fmt::format("{} (set --node-name to the Kubernetes node's name)", s.message()));
  }
  return Status::Ok();
}

Status DaemonFlags::FinishPools(DaemonConfig& c) const {
  advisor::PoolControlOptions& p = c.agent.pools;
  QRM_RETURN_IF_ERROR(Seconds(pool_period_, "pool-period", p.period_s));
  QRM_RETURN_IF_ERROR(Seconds(shrink_interval_, "pool-shrink-interval", p.sizer.shrink_interval_s,
                              /*allow_zero=*/true));
  QRM_RETURN_IF_ERROR(Seconds(reactive_window_, "pool-reactive-window", p.reactive_window_s));
  QRM_RETURN_IF_ERROR(CheckPoolNumbers(p));
  return p.Validate();
}

StatusOr<DaemonConfig> DaemonFlags::Finish() const {
  DaemonConfig c = values_;
  QRM_RETURN_IF_ERROR(config::CheckLogFlags(c.log_level, c.log_format));
  QRM_RETURN_IF_ERROR(FinishDurations(c));
  QRM_RETURN_IF_ERROR(FinishPools(c));
  QRM_RETURN_IF_ERROR(FinishGuard(c));
  QRM_RETURN_IF_ERROR(FinishReport(c));
  auto uids = ParseUidList(allowed_uids_, "socket-allowed-uids");
  if (!uids.ok()) return uids.status();
  c.server.allow.uids = *uids;
  auto predictors = advisor::Predictors::Make(c.predictors);  // names checked here, once
  if (!predictors.ok()) return predictors.status();
  return c;
}

}  // namespace qrm::advisor_cmd
