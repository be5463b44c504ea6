// A small Prometheus metrics registry: counters, gauges and histograms with labels, rendered
// in the text exposition format (version 0.0.4) for /metrics.
//
// Metrics are looked up once and kept: `Counter& c = registry.GetCounter(...)` returns a
// reference that stays valid for the registry's lifetime, and Inc/Set/Observe are lock-free
// atomics, so instrumented hot paths (CRI pass-through, admission) pay no lock. Looking a
// metric up takes the registry's mutex; do it at construction time or cache the reference.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/mutex.h"

namespace qrm::metrics {

using Labels = std::map<std::string, std::string>;

class Counter {
 public:
  void Inc(double by = 1);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double by);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  // Cumulative count per bound (Prometheus "le" semantics), then +Inf.
  std::vector<uint64_t> CumulativeCounts() const;
  uint64_t Count() const { return count_.load(std::memory_order_relaxed); }
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bound, plus one for +Inf
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// Latency buckets in seconds, 100 us to 30 s.
std::vector<double> LatencyBuckets();

// Seconds since construction, for Histogram::Observe.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

class Registry {
 public:
  Counter& GetCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& GetGauge(const std::string& name, const std::string& help, const Labels& labels = {});
  Histogram& GetHistogram(const std::string& name, const std::string& help,
                          const Labels& labels = {},
                          const std::vector<double>& bounds = LatencyBuckets());

  // The text exposition of every metric, families sorted by name, series by labels, then
  // what the collectors write.
  std::string Exposition() const;

  // A collector appends complete metric families (# HELP/# TYPE and samples) at scrape time,
  // for values that live elsewhere (counters kept by another component, a gauge computed
  // from current state). It must be thread-safe and quick.
  void AddCollector(std::function<void(std::string& out)> collector);

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Family {
    Type type = Type::kCounter;
    std::string help;
    std::map<Labels, std::unique_ptr<Counter>> counters;
    std::map<Labels, std::unique_ptr<Gauge>> gauges;
    std::map<Labels, std::unique_ptr<Histogram>> histograms;
  };
  Family& FamilyFor(const std::string& name, const std::string& help, Type type) QRM_REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, Family> families_ QRM_GUARDED_BY(mu_);
  std::vector<std::function<void(std::string&)>> collectors_ QRM_GUARDED_BY(mu_);
};

// The process-wide registry the host's and plugins' components report to.
Registry& Default();

}  // namespace qrm::metrics
