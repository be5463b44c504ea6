#include "common/metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace qrm::metrics {
namespace {

void AtomicAdd(std::atomic<double>& a, double by) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + by, std::memory_order_relaxed)) {
  }
}

std::string Escape(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatLabels(const Labels& labels, const std::string& extra_key = "",
                         const std::string& extra_value = "") {
  if (labels.empty() && extra_key.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    out += fmt::format("{}{}=\"{}\"", first ? "" : ",", k, Escape(v));
    first = false;
  }
  if (!extra_key.empty()) {
    out += fmt::format("{}{}=\"{}\"", first ? "" : ",", extra_key, extra_value);
  }
  return out + "}";
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  return fmt::format("{}", v);
}

}  // namespace

void Counter::Inc(double by) {
  if (by > 0) AtomicAdd(value_, by);  // counters never go down
}

void Gauge::Add(double by) {
  AtomicAdd(value_, by);
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)),
      buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
  std::sort(bounds_.begin(), bounds_.end());
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::Observe(double v) {
  const size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, v);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    out[i] = running;
  }
  return out;
}

std::vector<double> LatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30};
}

Registry::Family& Registry::FamilyFor(const std::string& name, const std::string& help, Type type) {
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.type = type;
    it->second.help = help;
  } else if (it->second.type != type) {
    // A programming error (one name, two types): fail loudly in development.
    throw std::logic_error("metric " + name + " registered with two types");
  }
  return it->second;
}

Counter& Registry::GetCounter(const std::string& name, const std::string& help,
                              const Labels& labels) {
  MutexLock lock(mu_);
  auto& slot = FamilyFor(name, help, Type::kCounter).counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Registry::GetGauge(const std::string& name, const std::string& help, const Labels& labels) {
  MutexLock lock(mu_);
  auto& slot = FamilyFor(name, help, Type::kGauge).gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& Registry::GetHistogram(const std::string& name, const std::string& help,
                                  const Labels& labels, const std::vector<double>& bounds) {
  MutexLock lock(mu_);
  auto& slot = FamilyFor(name, help, Type::kHistogram).histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(bounds);
  return *slot;
}

std::string Registry::Exposition() const {
  MutexLock lock(mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    const char* type = family.type == Type::kCounter ? "counter"
                       : family.type == Type::kGauge ? "gauge"
                                                     : "histogram";
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, family.help, name, type);
    for (const auto& [labels, c] : family.counters) {
      out += fmt::format("{}{} {}\n", name, FormatLabels(labels), Number(c->Value()));
    }
    for (const auto& [labels, g] : family.gauges) {
      out += fmt::format("{}{} {}\n", name, FormatLabels(labels), Number(g->Value()));
    }
    for (const auto& [labels, h] : family.histograms) {
      const std::vector<uint64_t> counts = h->CumulativeCounts();
      for (size_t i = 0; i < h->bounds().size(); ++i) {
        out += fmt::format("{}_bucket{} {}\n", name,
                           FormatLabels(labels, "le", Number(h->bounds()[i])), counts[i]);
      }
      out +=
          fmt::format("{}_bucket{} {}\n", name, FormatLabels(labels, "le", "+Inf"), counts.back());
      out += fmt::format("{}_sum{} {}\n", name, FormatLabels(labels), Number(h->Sum()));
      out += fmt::format("{}_count{} {}\n", name, FormatLabels(labels), h->Count());
    }
  }
  for (const auto& collect : collectors_) collect(out);
  return out;
}

void Registry::AddCollector(std::function<void(std::string& out)> collector) {
  MutexLock lock(mu_);
  collectors_.push_back(std::move(collector));
}

Registry& Default() {
  static Registry* registry = new Registry();  // never destroyed: used until exit
  return *registry;
}

}  // namespace qrm::metrics
