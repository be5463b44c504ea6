// PoolController: sizes the CPU plugin's shared and reclaimed pools from the advisor's view
// (docs/advisor.md, "Pool sizing"). Every `period_s` it asks what the shared pool needs,
//
//   need = max(reactive_factor x recent pool usage, the pool model's predicted peak) + margin
//
// (recent usage: the p90 of the last `reactive_window_s`; Katalyst provisions 1.25 x usage),
// lets the PoolSizer move the pool within its ramp limits and writes a changed size to the
// plugin's pool control file. The plugin applies it and qrm-host's reconcile moves the
// containers: the advisor never writes a cgroup.
//
// It writes nothing while its inputs are stale (no fresh node sample, qrm-host unreachable:
// "stale") or the pool model has not observed a step yet ("waiting"): the pools then stay as
// they are. When the advisor stops, they stay at its last decision.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "advisor/pools/pool_sizer.h"
#include "advisor/predict/peak_model.h"
#include "common/log.h"

namespace qrm::advisor {

struct PoolControlOptions {
  std::string control_file;  // "": the advisor does not size pools
  PoolSizerOptions sizer;
  double reactive_factor = 1.25;
  int64_t reactive_window_s = 10;
  double margin_cores = 0;
  int64_t period_s = 5;
  Status Validate() const;  // naming the field and value
};

// What the controller knows at a tick.
struct PoolSituation {
  int64_t now = 0;
  std::optional<int> pool_cpus;        // CPUs neither reserved nor dedicated; none: stale
  std::optional<double> recent_usage;  // p90 of the window; none: stale
  bool pool_model = false;             // a pool model is configured
  Prediction predicted;                // the pool model's prediction
  std::optional<int> observed_shared;  // the shared pool as the allocations show it
};

struct PoolReport {
  bool enabled = false;
  int free_cpus = 0, shared = 0, reclaimed = 0, target = 0;
  std::string reason;
  double need_cores = 0, reactive_cores = 0, predicted_cores = 0;
  int64_t decided = 0;  // Unix seconds of the last decision (0: none yet)
  std::string last_error;
  uint64_t writes = 0, write_failures = 0;
};

class PoolController {
 public:
  explicit PoolController(const PoolControlOptions& options);

  // Decides once per period (a no-op in between, and when disabled); returns true when it
  // wrote the control file.
  bool Tick(const PoolSituation& situation);
  const PoolReport& report() const { return report_; }

 private:
  // The shared size in force when the controller starts or after a failed write: the
  // control file's, else what the allocations show.
  std::optional<int> CurrentShared(const PoolSituation& s) const;
  bool Apply(const PoolDecision& d, const PoolSituation& s, int previous);

  PoolControlOptions options_;
  PoolSizer sizer_;
  bool synced_ = false;  // the sizer's current size is the plugin's
  std::optional<int64_t> last_tick_;
  PoolReport report_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace qrm::advisor
