// What the in-process host and shim spent, by metric series, between two moments: the
// `_sum` and `_count` samples of every histogram in a Prometheus text exposition
// (qrm::metrics::Registry::Exposition), subtracted. Used by P4 to split the shim's added
// time into phases with the timers the code already has.
#pragma once

#include <map>
#include <string>

namespace qrm::bench {

struct SeriesTotal {
  double sum = 0;    // seconds
  double count = 0;  // observations
};

// Series name with labels ("qrm_admission_duration_seconds{phase=\"affinity\",...}") ->
// totals, for every histogram in `exposition`.
using HistogramTotals = std::map<std::string, SeriesTotal>;

HistogramTotals ParseHistogramTotals(const std::string& exposition);

// after - before, for the series that gained observations.
HistogramTotals Delta(const HistogramTotals& before, const HistogramTotals& after);

}  // namespace qrm::bench
