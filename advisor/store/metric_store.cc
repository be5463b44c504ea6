#include "advisor/store/metric_store.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "advisor/usage/stats.h"

namespace qrm::advisor {
namespace {

Status Whole(const char* field, int64_t value, int64_t step, const char* step_name) {
  if (value < step || value % step != 0) {
    return InvalidArgumentError(fmt::format("{}: invalid value {} s (a multiple of the {}, {} s)",
                                            field, value, step_name, step));
  }
  return Status::Ok();
}

}  // namespace

Status StoreOptions::Validate() const {
  if (ring.interval_s < 1) {
    return InvalidArgumentError(
        fmt::format("interval: invalid value {} s (>= 1 s)", ring.interval_s));
  }
  QRM_RETURN_IF_ERROR(Whole("raw_horizon", ring.raw_horizon_s, ring.interval_s, "interval"));
  QRM_RETURN_IF_ERROR(Whole("bucket", ring.bucket_s, ring.interval_s, "interval"));
  QRM_RETURN_IF_ERROR(Whole("bucket_horizon", ring.bucket_horizon_s, ring.bucket_s, "bucket"));
  if (ring.bucket_s > ring.raw_horizon_s) {
    // A bucket is summarized from the raw samples, so all of them must fit in the raw ring.
    return InvalidArgumentError(
        fmt::format("bucket: invalid value {} s (at most the raw_horizon, {} s)", ring.bucket_s,
                    ring.raw_horizon_s));
  }
  if (ring.raw_horizon_s / ring.interval_s > 86400 ||
      ring.bucket_horizon_s / ring.bucket_s > 86400) {
    return InvalidArgumentError(
        fmt::format("raw_horizon {} s / bucket_horizon {} s: more than 86400 slots per series",
                    ring.raw_horizon_s, ring.bucket_horizon_s));
  }
  if (gc_after_s < 0) {
    return InvalidArgumentError(fmt::format("gc_after: invalid value {} s (>= 0 s)", gc_after_s));
  }
  return Status::Ok();
}

MetricStore::MetricStore(const StoreOptions& options) : options_(options) {}

void MetricStore::Add(const std::string& series, int64_t time, double value) {
  auto it = series_.find(series);
  if (it == series_.end()) it = series_.emplace(series, SeriesRing(options_.ring)).first;
  it->second.Add(time, static_cast<float>(value));
}

std::optional<Aggregate> MetricStore::Query(const std::string& series, int64_t now,
                                            int64_t window_s) const {
  const auto it = series_.find(series);
  if (it == series_.end()) return std::nullopt;
  WindowValues w = it->second.Window(now, window_s);
  if (w.values.empty()) return std::nullopt;
  Aggregate a;
  a.count = w.values.size();
  double sum = 0;
  for (float v : w.values) sum += v;
  a.avg = sum / static_cast<double>(a.count);
  a.p50 = NearestRank(w.values, 0.5);
  a.p90 = NearestRank(w.values, 0.9);
  a.p95 = NearestRank(w.values, 0.95);
  a.p99 = NearestRank(w.values, 0.99);
  a.max = w.max;
  a.from_buckets = w.from_buckets;
  return a;
}

size_t MetricStore::CollectGarbage(int64_t now) {
  return std::erase_if(series_, [&](const auto& entry) {
    return entry.second.empty() || entry.second.newest() < now - options_.gc_after_s;
  });
}

}  // namespace qrm::advisor
