#include "advisor/agent/guard_inputs.h"

#include "advisor/guard/guard_metrics.h"

namespace qrm::advisor {
namespace {

// The node samples of the tick, each stamped with the tick's time.
void AddNodeSamples(const TickUsage& tick, guard::RoundInput& round) {
  if (tick.node_cpu)
    round.samples[std::string(guard::kCpuTotalUsage)] = {*tick.node_cpu, tick.time};
  if (tick.node_memory)
    round.samples[std::string(guard::kMemoryTotalUsage)] = {*tick.node_memory, tick.time};
  if (tick.cpu_capacity > 0) round.capacity[std::string(guard::kCpuTotalUsage)] = tick.cpu_capacity;
  if (tick.memory_capacity > 0)
    round.capacity[std::string(guard::kMemoryTotalUsage)] = tick.memory_capacity;
}

void AddContainer(const TrackedContainer& c, const ContainerSample* sample, guard::GuardPod& pod,
                  GuardedPod& guarded) {
  guard::GuardCandidate& p = pod.candidate;
  if (pod.qos_level.empty()) pod.qos_level = c.qos_level;
  if (sample != nullptr && sample->cpu) p.cpu_usage = p.cpu_usage.value_or(0) + *sample->cpu;
  if (sample != nullptr) p.memory_usage = p.memory_usage.value_or(0) + sample->memory;
  p.cpu_request += c.cpu_request;
  // A pod has a limit only when every container has one (one without a limit may use all).
  if (c.cpu_limit > 0 && (guarded.containers.empty() || p.cpu_limit)) {
    p.cpu_limit = p.cpu_limit.value_or(0) + c.cpu_limit;
  } else {
    p.cpu_limit.reset();
  }
  if (c.created_unix > 0 && (p.start_time_s == 0 || c.created_unix < p.start_time_s)) {
    p.start_time_s = c.created_unix;
  }
  guarded.containers.push_back(
      {c.name, sample != nullptr ? sample->cpu : std::nullopt, c.cpu_quota_us, c.cpu_period_us});
}

}  // namespace

GuardInput BuildGuardInput(const AgentState& state, int64_t now) {
  GuardInput out;
  out.round.now_s = now;
  const TickUsage& tick = state.last_tick;
  AddNodeSamples(tick, out.round);
  std::vector<const ContainerSample*> sample_of(state.containers.size(), nullptr);
  for (const ContainerSample& s : tick.containers) {
    if (s.index < sample_of.size()) sample_of[s.index] = &s;
  }
  std::map<std::string, guard::GuardPod> pods;
  for (size_t i = 0; i < state.containers.size(); ++i) {
    const TrackedContainer& c = state.containers[i];
    if (c.pod_uid.empty()) continue;  // not a kubelet pod: nothing the guard may touch
    const std::string key = c.pod_namespace + "/" + c.pod_name;
    auto [it, fresh] = pods.try_emplace(key);
    if (fresh) {
      it->second.candidate.pod_uid = c.pod_uid;
      it->second.candidate.pod_namespace = c.pod_namespace;
      it->second.candidate.pod_name = c.pod_name;
      out.pods[key].uid = c.pod_uid;
    }
    AddContainer(c, sample_of[i], it->second, out.pods[key]);
  }
  for (auto& [key, pod] : pods) out.round.pods.push_back(std::move(pod));
  return out;
}

}  // namespace qrm::advisor
