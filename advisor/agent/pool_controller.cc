#include "advisor/agent/pool_controller.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "advisor/pools/pool_control_file.h"

namespace qrm::advisor {

Status PoolControlOptions::Validate() const {
  QRM_RETURN_IF_ERROR(sizer.Validate());
  if (!(reactive_factor >= 0) || !std::isfinite(reactive_factor)) {
    return InvalidArgumentError(
        fmt::format("pool_reactive_factor {}: must be >= 0", reactive_factor));
  }
  if (reactive_window_s < 1) {
    return InvalidArgumentError(
        fmt::format("pool_reactive_window {}s: must be >= 1s", reactive_window_s));
  }
  if (!(margin_cores >= 0) || !std::isfinite(margin_cores)) {
    return InvalidArgumentError(fmt::format("pool_margin_cores {}: must be >= 0", margin_cores));
  }
  if (period_s < 1)
    return InvalidArgumentError(fmt::format("pool_period {}s: must be >= 1s", period_s));
  return Status::Ok();
}

PoolController::PoolController(const PoolControlOptions& options)
    : options_(options), sizer_(options.sizer), log_(Logger("advisor-pools")) {
  report_.enabled = !options.control_file.empty();
}

std::optional<int> PoolController::CurrentShared(const PoolSituation& s) const {
  auto file = ReadPoolControl(options_.control_file);
  if (file.ok() && file->shared) return file->shared;
  if (file.ok() && file->reclaimed && s.pool_cpus) return *s.pool_cpus - *file->reclaimed;
  if (!file.ok() && file.status().code() != StatusCode::kNotFound) {
    log_->warn("pool control file {}: {}; taking the pool size from the allocations",
               options_.control_file, file.status().ToString());
  }
  return s.observed_shared;
}

bool PoolController::Tick(const PoolSituation& s) {
  if (!report_.enabled) return false;
  if (last_tick_ && s.now - *last_tick_ < options_.period_s) return false;
  last_tick_ = s.now;
  if (!s.pool_cpus || *s.pool_cpus < 1 || !s.recent_usage) {
    report_.reason = "stale";
    return false;
  }
  if (s.pool_model && !s.predicted.known) {
    report_.reason = "waiting";
    return false;
  }
  if (!synced_) {
    sizer_.SetCurrent(CurrentShared(s));
    synced_ = true;
  } else if (s.observed_shared && s.observed_shared != sizer_.current()) {
    // The plugin moved the pool (a dedicated admission takes its CPUs from the shared pool,
    // a size it refused was never applied): decide from what is in force. Right after a
    // write the cpusets lag by a reconcile period; deciding again then rewrites the same size.
    sizer_.SetCurrent(s.observed_shared);
  }
  report_.reactive_cores = options_.reactive_factor * *s.recent_usage;
  report_.predicted_cores = s.predicted.known ? s.predicted.peak : 0;
  report_.need_cores =
      std::max(report_.reactive_cores, report_.predicted_cores) + options_.margin_cores;
  const int previous = sizer_.current().value_or(0);
  const PoolDecision d = sizer_.Decide(PoolInputs{*s.pool_cpus, report_.need_cores, s.now});
  report_.free_cpus = *s.pool_cpus;
  report_.target = d.target;
  report_.reason = d.reason;
  report_.decided = s.now;
  if (!d.changed) {
    report_.shared = d.shared;
    report_.reclaimed = d.reclaimed;
    return false;
  }
  return Apply(d, s, previous);
}

bool PoolController::Apply(const PoolDecision& d, const PoolSituation& s, int previous) {
  const Status written = WriteSharedPoolSize(options_.control_file, d.shared, *s.pool_cpus);
  if (!written.ok()) {
    report_.write_failures++;
    report_.last_error = written.ToString();
    synced_ = false;  // the plugin did not get it: start again from what is in force
    log_->error("pool control file {}: shared {} not written: {}", options_.control_file, d.shared,
                written.ToString());
    return false;
  }
  log_->info(
      "pools: shared {} -> {}, reclaimed {} ({}; need {:.2f} cores: recent {:.2f}, "
      "predicted {:.2f}; {} pool CPUs)",
      previous, d.shared, d.reclaimed, d.reason, report_.need_cores, report_.reactive_cores,
      report_.predicted_cores, *s.pool_cpus);
  report_.shared = d.shared;
  report_.reclaimed = d.reclaimed;
  report_.writes++;
  report_.last_error.clear();
  return true;
}

}  // namespace qrm::advisor
