// qrm-drain-planner's flags, shared by `plan` and `execute` (execute adds its own), each
// validated before anything is read (errors name the flag and the value). The planner's flags
// carry the Cluster Autoscaler's names and defaults where CA has the setting.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cluster/drain/executor.h"
#include "cluster/drain/planner.h"
#include "cluster/drain/snapshot_json.h"
#include "common/status.h"

namespace qrm::drain_cmd {

struct PlannerConfig {
  // Offline: the files to read (any of NodeList, PodList, PodDisruptionBudgetList,
  // NodeResourceTopologyList, or a List of them; "-" is stdin). Empty: read the API server.
  std::vector<std::string> inputs;
  std::string kubeconfig;  // live mode
  cluster::drain::DecodeOptions decode;
  cluster::drain::PlannerOptions planner;
  bool compare = false;    // plan both ways and report the difference
  std::string state_file;  // "": no state between passes
  std::string output = "table";
  bool execute = false;
  cluster::drain::ExecuteOptions execution;
  std::string log_level = "warn";
  std::string log_format = "text";
};

class PlannerFlags {
 public:
  explicit PlannerFlags(bool execute);
  boost::program_options::options_description& description() { return desc_; }
  // The flags only execute takes (for the top-level --help).
  const boost::program_options::options_description& execute_description() const {
    return execute_desc_;
  }
  StatusOr<PlannerConfig> Finish() const;

 private:
  void AddPlanFlags();
  void AddDrainRuleFlags();
  void AddExecuteFlags();
  Status FinishPlanner(PlannerConfig& c) const;
  Status FinishExecute(PlannerConfig& c) const;

  boost::program_options::options_description desc_{"plan and execute options"};
  boost::program_options::options_description execute_desc_{"execute options"};
  PlannerConfig values_;
  std::string now_;
  std::string simulation_timeout_ = "30s";
  std::string recent_eviction_window_ = "5m";
  std::string bsp_timeout_ = "1h";
  std::vector<std::string> min_sizes_;
  std::string roles_json_;
  std::string roles_file_;
  std::string retry_interval_ = "5s";
  std::string eviction_timeout_ = "10m";
  int max_graceful_termination_sec_ = 600;  // CA's default
  int64_t grace_period_ = -1;
};

}  // namespace qrm::drain_cmd
