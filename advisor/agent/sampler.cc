#include "advisor/agent/sampler.h"

#include <algorithm>
#include <utility>

namespace qrm::advisor {

PriorityClass PriorityOfQosLevel(const std::string& qos_level) {
  return qos_level == "reclaimed_cores" ? PriorityClass::kBatch : PriorityClass::kProd;
}

Sampler::Sampler(const SamplerOptions& options)
    : options_(options),
      reader_(options.cgroup_root, DetectCgroupVersion(options.cgroup_root)),
      log_(Logger("advisor-sampler")),
      unreadable_log_(log_, "unreadable cgroup lines") {}

TickUsage Sampler::Sample(const std::vector<TrackedContainer>& containers, int64_t time,
                          int64_t mono_ns) {
  TickUsage tick;
  tick.time = time;
  SampleNode(tick);                      // /proc/stat's ticks are their own clock
  std::map<std::string, CpuRate> rates;  // only the containers still given keep their state
  for (size_t i = 0; i < containers.size(); ++i) {
    SampleContainer(containers[i], i, mono_ns, tick, rates);
  }
  for (const auto& [key, rate] : rates_) {
    if (!rates.contains(key)) retired_resets_ += rate.resets();
  }
  rates_ = std::move(rates);
  uint64_t resets = retired_resets_;
  for (const auto& [key, rate] : rates_) resets += rate.resets();
  counters_.cpu_resets = resets;
  counters_.ticks++;
  counters_.vanished += tick.vanished;
  counters_.unreadable += tick.unreadable;
  return tick;
}

void Sampler::SampleNode(TickUsage& tick) {
  auto node = ReadNodeCounters(options_.procfs_root);
  if (!node.ok()) {
    counters_.node_errors++;
    unreadable_log_.Log(spdlog::level::warn, "node counters: {}", node.status().ToString());
    return;
  }
  tick.cpu_capacity = node->cpus;
  tick.memory_capacity = static_cast<double>(node->memory_total);
  tick.node_memory = static_cast<double>(node->memory_total -
                                         std::min(node->memory_available, node->memory_total));
  if (last_node_.has_value()) tick.node_cpu = NodeCoresUsed(*last_node_, *node);
  last_node_ = *node;
}

void Sampler::SampleContainer(const TrackedContainer& c, size_t index, int64_t mono_ns,
                              TickUsage& tick, std::map<std::string, CpuRate>& rates) {
  const std::string key = c.Key();
  auto counters = reader_.Read(c.cgroup_path);
  if (!counters.ok()) {
    if (counters.status().code() == StatusCode::kNotFound) {
      tick.vanished++;
    } else {
      tick.unreadable++;
      unreadable_log_.Log(spdlog::level::warn, "{}: {}",
                          PodRef{c.pod_uid, c.pod_namespace, c.pod_name, c.name},
                          counters.status().ToString());
    }
    if (auto it = rates_.find(key); it != rates_.end()) rates.emplace(key, it->second);
    return;
  }
  auto it = rates_.find(key);
  CpuRate rate = it != rates_.end() ? it->second : CpuRate{};
  ContainerSample s;
  s.index = index;
  s.cpu = rate.Update(counters->cpu_usage_ns, mono_ns);
  s.memory = static_cast<double>(counters->memory_working_set);
  rates.emplace(key, rate);
  tick.containers.push_back(s);
}

}  // namespace qrm::advisor
