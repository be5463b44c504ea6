// ReportSchedule: when the node report is written to the Kubernetes API (docs/node-report.md).
// Every `interval_s` (Koordinator's reportIntervalSeconds, 60 s), and sooner when the node's
// reported CPU or memory usage moved more than `change` (a fraction of capacity, 5 %) since the
// last write, but never twice within `min_gap_s` (a flapping value must not flood the API
// server). A write that failed is retried at the next check.
#pragma once

#include <cstdint>
#include <optional>

#include "common/status.h"

namespace qrm::advisor {

struct ReportScheduleOptions {
  int64_t interval_s = 60;
  double change = 0.05;
  int64_t min_gap_s = 10;
  // kInvalidArgument naming the field: interval 30 s (koordlet's floor) to 600 s, change in
  // (0, 1], gap 1 s up to the interval.
  Status Validate() const;
};

class ReportSchedule {
 public:
  explicit ReportSchedule(ReportScheduleOptions options) : options_(options) {}

  // Whether a report with these usages (fractions of capacity) should be written at `now`.
  bool Due(int64_t now, double cpu_fraction, double memory_fraction) const;
  void Written(int64_t now, double cpu_fraction, double memory_fraction);
  // A controller's spec.metricCollectPolicy.reportIntervalSeconds, clamped to [30, 600] s as
  // koordlet floors it; nullopt goes back to the configured interval.
  void SetIntervalOverride(std::optional<int64_t> seconds);
  int64_t interval_s() const;

 private:
  ReportScheduleOptions options_;
  std::optional<int64_t> override_s_;
  std::optional<int64_t> last_;
  double last_cpu_ = 0, last_memory_ = 0;
};

}  // namespace qrm::advisor
