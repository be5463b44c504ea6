#include "advisor/guard/guard_sorters.h"

#include <algorithm>
#include <tuple>

namespace qrm::advisor::guard {
namespace {

int Compare(double a, double b) {
  return a < b ? -1 : (a > b ? 1 : 0);
}

// Higher first; a pod without a sample after every pod with one (its release is unknown).
int HigherSampledFirst(const std::optional<double>& a, const std::optional<double>& b) {
  if (a.has_value() != b.has_value()) return a.has_value() ? -1 : 1;
  return a ? Compare(*b, *a) : 0;
}

std::optional<double> ExtCpuRatio(const GuardCandidate& c) {
  if (!c.ext_cpu_usage || *c.ext_cpu_usage <= 0) return std::nullopt;
  if (!c.ext_cpu_limit || *c.ext_cpu_limit <= 0) return 0.0;  // uses some, no limit to relate
  return *c.ext_cpu_usage / *c.ext_cpu_limit;
}

}  // namespace

int ClassAndPriority(const GuardCandidate& a, const GuardCandidate& b) {
  if (a.cls != b.cls) return static_cast<int>(a.cls) < static_cast<int>(b.cls) ? -1 : 1;
  return a.priority == b.priority ? 0 : (a.priority < b.priority ? -1 : 1);
}

int RunningTime(const GuardCandidate& a, const GuardCandidate& b) {
  // Started later = has run for less: gives way first.
  return a.start_time_s == b.start_time_s ? 0 : (a.start_time_s > b.start_time_s ? -1 : 1);
}

int CpuUsage(const GuardCandidate& a, const GuardCandidate& b) {
  return HigherSampledFirst(a.cpu_usage, b.cpu_usage);
}

int MemoryUsage(const GuardCandidate& a, const GuardCandidate& b) {
  return HigherSampledFirst(a.memory_usage, b.memory_usage);
}

int ExtCpuUsage(const GuardCandidate& a, const GuardCandidate& b) {
  return HigherSampledFirst(ExtCpuRatio(a), ExtCpuRatio(b));
}

bool PodOrder::Before(const GuardCandidate& a, const GuardCandidate& b) const {
  for (PodKey key : keys) {
    if (const int c = key(a, b); c != 0) return c < 0;
  }
  return std::tie(a.pod_namespace, a.pod_name, a.pod_uid) <
         std::tie(b.pod_namespace, b.pod_name, b.pod_uid);
}

void PodOrder::Sort(std::vector<GuardCandidate>& pods) const {
  std::sort(pods.begin(), pods.end(),
            [this](const GuardCandidate& a, const GuardCandidate& b) { return Before(a, b); });
}

void PodOrder::Sort(std::vector<const GuardCandidate*>& pods) const {
  std::sort(pods.begin(), pods.end(),
            [this](const GuardCandidate* a, const GuardCandidate* b) { return Before(*a, *b); });
}

PodOrder GeneralOrder() {
  return PodOrder{{ClassAndPriority, RunningTime}};
}

PodOrder CpuUsageOrder() {
  return PodOrder{{ClassAndPriority, CpuUsage, ExtCpuUsage, RunningTime}};
}

PodOrder MemoryUsageOrder() {
  return PodOrder{{ClassAndPriority, MemoryUsage, RunningTime}};
}

}  // namespace qrm::advisor::guard
