// The advisor's recent usage: one SeriesRing per series (the node, system usage, each
// container, for CPU and memory), aggregated over windows the way Koordinator's NodeMetric
// reports them (avg, p50, p90, p95, p99, max over 5, 10 and 30 minutes). Series that receive
// nothing for `gc_after_s` (their container is gone) are dropped. Not thread-safe: the
// sampling loop owns it and hands out aggregates.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "advisor/store/series_ring.h"
#include "common/status.h"

namespace qrm::advisor {

struct StoreOptions {
  RingOptions ring;
  int64_t gc_after_s = 300;

  // kInvalidArgument naming the field: intervals >= 1 s, horizons >= their step and a whole
  // number of them, a bucket a whole number of intervals and within the raw horizon, at most 1 day
  // of raw samples.
  Status Validate() const;
};

struct Aggregate {
  uint64_t count = 0;  // samples (or buckets) the figures come from
  double avg = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
  bool from_buckets = false;  // beyond the raw horizon: from the buckets' means and maxima
};

class MetricStore {
 public:
  explicit MetricStore(const StoreOptions& options);

  void Add(const std::string& series, int64_t time, double value);

  // The window (now - window_s, now] of `series`; nullopt when it has no sample there.
  std::optional<Aggregate> Query(const std::string& series, int64_t now, int64_t window_s) const;

  // Drops series whose newest sample is older than now - gc_after_s; returns how many.
  size_t CollectGarbage(int64_t now);

  size_t series_count() const { return series_.size(); }
  const StoreOptions& options() const { return options_; }

 private:
  StoreOptions options_;
  std::map<std::string, SeriesRing> series_;
};

}  // namespace qrm::advisor
