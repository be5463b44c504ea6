#include "advisor/guard/guard_metrics.h"

namespace qrm::advisor::guard {
namespace {

std::optional<double> PodCpu(const GuardCandidate& c) {
  return c.cpu_usage;
}

std::optional<double> PodMemory(const GuardCandidate& c) {
  return c.memory_usage;
}

std::vector<GuardMetric> Registry() {
  GuardMetric cpu;
  cpu.name = kCpuTotalUsage;
  cpu.action_priority = 5;
  cpu.sortable = true;
  cpu.throttleable = cpu.throttle_quantified = true;  // released = usage - new quota
  cpu.evictable = cpu.evict_quantified = true;        // released = the pod's usage
  cpu.order = CpuUsageOrder();
  cpu.pod_usage = PodCpu;

  GuardMetric memory;
  memory.name = kMemoryTotalUsage;
  // Memory pressure ends in the OOM killer: it is acted on first when both are breached.
  memory.action_priority = 7;
  memory.sortable = true;
  memory.evictable = memory.evict_quantified = true;  // memory has no quota to lower
  memory.order = MemoryUsageOrder();
  memory.pod_usage = PodMemory;
  return {cpu, memory};
}

}  // namespace

const std::vector<GuardMetric>& Metrics() {
  static const std::vector<GuardMetric> metrics = Registry();
  return metrics;
}

const GuardMetric* FindMetric(std::string_view name) {
  for (const GuardMetric& m : Metrics()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace qrm::advisor::guard
