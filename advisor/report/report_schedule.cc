#include "advisor/report/report_schedule.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace qrm::advisor {

Status ReportScheduleOptions::Validate() const {
  if (interval_s < 30 || interval_s > 600) {
    return InvalidArgumentError(
        fmt::format("report_interval {}s: must be 30s to 600s (koordlet's floor, and a NodeMetric "
                    "older than 180s is stale to the scheduler)",
                    interval_s));
  }
  if (!(change > 0 && change <= 1)) {
    return InvalidArgumentError(
        fmt::format("report_change {}: must be a fraction of capacity in (0, 1]", change));
  }
  if (min_gap_s < 1 || min_gap_s > interval_s) {
    return InvalidArgumentError(
        fmt::format("report_min_gap {}s: must be 1s up to the report interval", min_gap_s));
  }
  return Status::Ok();
}

int64_t ReportSchedule::interval_s() const {
  return override_s_.value_or(options_.interval_s);
}

bool ReportSchedule::Due(int64_t now, double cpu_fraction, double memory_fraction) const {
  if (!last_) return true;
  const int64_t since = now - *last_;
  if (since >= interval_s()) return true;
  if (since < options_.min_gap_s) return false;
  return std::abs(cpu_fraction - last_cpu_) > options_.change ||
         std::abs(memory_fraction - last_memory_) > options_.change;
}

void ReportSchedule::Written(int64_t now, double cpu_fraction, double memory_fraction) {
  last_ = now;
  last_cpu_ = cpu_fraction;
  last_memory_ = memory_fraction;
}

void ReportSchedule::SetIntervalOverride(std::optional<int64_t> seconds) {
  if (!seconds) {
    override_s_.reset();
    return;
  }
  override_s_ = std::clamp<int64_t>(*seconds, 30, 600);
}

}  // namespace qrm::advisor
