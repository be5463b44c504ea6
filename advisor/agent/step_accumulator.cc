#include "advisor/agent/step_accumulator.h"

#include <algorithm>

#include "advisor/usage/stats.h"

namespace qrm::advisor {

StepAccumulator::StepAccumulator(int64_t step_s, double step_quantile)
    : step_s_(std::max<int64_t>(step_s, 1)), quantile_(step_quantile) {}

std::optional<double> StepAccumulator::PoolUsage(const TickUsage& tick,
                                                 const std::vector<TrackedContainer>& containers) {
  double shared = 0;
  size_t measured = 0;
  for (const ContainerSample& s : tick.containers) {
    if (!containers[s.index].shared()) continue;
    if (!s.cpu.has_value()) return std::nullopt;
    shared += *s.cpu;
    ++measured;
  }
  const auto listed = static_cast<size_t>(std::count_if(containers.begin(), containers.end(),
                                                        [](const auto& c) { return c.shared(); }));
  if (measured != listed) return std::nullopt;  // some were not read at all
  return shared;
}

std::optional<StepObservations> StepAccumulator::Add(
    const TickUsage& tick, const std::vector<TrackedContainer>& containers, int pool_cpus) {
  const int64_t start = FloorToMultiple(tick.time, step_s_);
  std::optional<StepObservations> closed;
  if (step_start_.has_value() && start > *step_start_) {
    const bool sampled = !node_cpu_.values.empty() || !node_memory_.values.empty();
    closed = Close(*step_start_ + step_s_);
    if (!sampled) closed.reset();  // nothing to say about a step without node samples
  }
  if (!step_start_.has_value() || start > *step_start_) step_start_ = start;
  // A tick older than the open step (a clock stepped back) is dropped: steps only go forward.
  if (start == *step_start_) AddTick(tick, containers, pool_cpus);
  return closed;
}

void StepAccumulator::AddTick(const TickUsage& tick,
                              const std::vector<TrackedContainer>& containers, int pool_cpus) {
  if (tick.node_cpu) node_cpu_.Add(*tick.node_cpu);
  if (tick.node_memory) node_memory_.Add(*tick.node_memory);
  if (tick.cpu_capacity > 0) cpu_capacity_ = tick.cpu_capacity;
  if (tick.memory_capacity > 0) memory_capacity_ = tick.memory_capacity;
  if (auto pool = PoolUsage(tick, containers); pool && pool_cpus > 0) {
    pool_cpu_.Add(*pool);
    pool_cpus_ = pool_cpus;
  }
  struct PodTick {
    std::optional<double> cpu;
    double memory = 0;
    double request = 0;
    PriorityClass priority = PriorityClass::kProd;
  };
  std::map<std::string, PodTick> per_pod;
  for (const ContainerSample& s : tick.containers) {
    const TrackedContainer& c = containers[s.index];
    PodTick& pod = per_pod[c.pod_uid];
    if (s.cpu) pod.cpu = pod.cpu.value_or(0) + *s.cpu;
    pod.memory += s.memory;
    pod.request += c.cpu_request;
    pod.priority = c.priority;
  }
  for (const auto& [uid, figures] : per_pod) {
    PodSeries& pod = pods_[uid];
    pod.priority = figures.priority;
    pod.cpu_request = figures.request;
    if (figures.cpu) pod.cpu.Add(*figures.cpu);
    pod.memory.Add(figures.memory);
    auto [seen, inserted] = seen_.try_emplace(uid, Seen{tick.time, tick.time});
    seen->second.last = tick.time;
  }
}

void StepAccumulator::Summarize(Series& s, double& representative, double& max) const {
  if (s.values.empty()) return;
  max = *std::max_element(s.values.begin(), s.values.end());
  representative = NearestRank(s.values, quantile_);
}

StepObservations StepAccumulator::Close(int64_t end) {
  StepObservations out;
  out.cpu.time = out.memory.time = end;
  out.cpu.capacity = cpu_capacity_;
  out.memory.capacity = memory_capacity_;
  Summarize(node_cpu_, out.cpu.node, out.cpu.node_max);
  Summarize(node_memory_, out.memory.node, out.memory.node_max);
  for (auto& [uid, pod] : pods_) {
    const int64_t started = seen_[uid].first;
    PodUsage cpu{uid, pod.priority, pod.cpu_request, 0, 0, started};
    PodUsage memory{uid, pod.priority, 0, 0, 0, started};
    if (!pod.cpu.values.empty()) {
      Summarize(pod.cpu, cpu.usage, cpu.usage_max);
      out.cpu.pods.push_back(cpu);
    }
    if (!pod.memory.values.empty()) {
      Summarize(pod.memory, memory.usage, memory.usage_max);
      out.memory.pods.push_back(memory);
    }
  }
  if (!pool_cpu_.values.empty() && pool_cpus_ > 0) {
    Observation pool;
    pool.time = end;
    pool.capacity = pool_cpus_;
    Summarize(pool_cpu_, pool.node, pool.node_max);
    out.pool = pool;
  }
  // A pod that misses a few steps keeps its age (the cold-start rules use it); one gone for
  // longer than the models keep pods is forgotten.
  std::erase_if(seen_, [&](const auto& kv) { return kv.second.last < end - kForgetPodAfterS; });
  node_cpu_ = {}, node_memory_ = {}, pool_cpu_ = {};
  pods_.clear();
  return out;
}

}  // namespace qrm::advisor
