// The qrm-advisor daemon's configuration: flags and the --config JSON (common/config), each
// validated before anything starts (errors name the key and the value).
#pragma once

#include <chrono>
#include <string>

#include <boost/program_options.hpp>

#include "advisor/agent/advisor_service.h"
#include "advisor/agent/agent.h"
#include "advisor/agent/guard_runner.h"
#include "advisor/agent/node_reporter.h"
#include "advisor/agent/predictors.h"
#include "advisor/discover/container_directory.h"
#include "common/status.h"

namespace qrm::advisor_cmd {

struct DaemonConfig {
  advisor::AgentOptions agent;
  advisor::PredictorOptions predictors;
  advisor::AdvisorServerOptions server;
  advisor::ContainerDirectoryOptions discover;
  std::string runtime_endpoint = "unix:///run/containerd/containerd.sock";
  std::string admin_socket = "/var/run/qrm/admin.sock";
  std::chrono::milliseconds host_timeout{std::chrono::seconds(2)};
  std::string state_dir = "/var/lib/qrm/advisor";  // "": no model checkpoints
  int64_t checkpoint_interval_s = 600;
  std::string metrics_address = "127.0.0.1:9468";
  std::string log_level = "info";
  std::string log_format = "text";
  advisor::GuardRunnerOptions guard;    // policy_file "": no guard
  std::string kubeconfig;               // eviction mode api: "" is the in-cluster config
  advisor::NodeReporterOptions report;  // node_name: --node-name, else $NODE_NAME, else hostname
  bool publish_node_report = false;     // write the NodeMetric to the Kubernetes API
};

class DaemonFlags {
 public:
  DaemonFlags();
  boost::program_options::options_description& description() { return desc_; }
  StatusOr<DaemonConfig> Finish() const;

 private:
  void AddSourceFlags();
  void AddSamplingFlags();
  void AddPoolFlags();
  void AddGuardFlags();
  void AddReportFlags();
  Status FinishGuard(DaemonConfig& c) const;
  Status FinishReport(DaemonConfig& c) const;
  Status FinishDurations(DaemonConfig& c) const;
  Status FinishPools(DaemonConfig& c) const;

  boost::program_options::options_description desc_{"qrm-advisor options"};
  DaemonConfig values_;
  std::string interval_ = "1s", step_ = "60s", inventory_period_ = "5s", stale_after_ = "15s";
  std::string host_timeout_ = "2s", runtime_timeout_ = "2s", checkpoint_interval_ = "10m";
  std::string raw_horizon_ = "5m", bucket_ = "10s", bucket_horizon_ = "30m", gc_after_ = "5m";
  std::string pool_period_ = "5s", shrink_interval_ = "30s", reactive_window_ = "10s";
  std::string allowed_uids_ = "0";
  std::string sysfs_root_ = "/sys";
  std::string netns_dir_ = "/var/run/netns";
  std::string guard_lease_ = "60s", guard_stale_after_ = "5s";
  std::string report_interval_ = "60s", report_min_gap_ = "10s";
};

}  // namespace qrm::advisor_cmd
