#include "advisor/agent/agent.h"

#include <algorithm>
#include <set>
#include <utility>

namespace qrm::advisor {

std::string NodeSeries(Resource r) {
  return "node/" + std::string(ResourceName(r));
}
std::string SystemSeries(Resource r) {
  return "system/" + std::string(ResourceName(r));
}
std::string ContainerSeries(const std::string& key, Resource r) {
  return key + "/" + std::string(ResourceName(r));
}

Agent::Agent(const AgentOptions& options, Predictors predictors, std::unique_ptr<HostSource> host,
             std::unique_ptr<RuntimeSource> runtime)
    : options_(options),
      state_(options.store),
      predictors_(std::move(predictors)),
      host_(std::move(host)),
      runtime_(std::move(runtime)),
      sampler_(options.sampler),
      steps_(options.step_s),
      pools_(options.pools),
      log_(Logger("advisor")) {}

void Agent::Tick(int64_t now, int64_t mono_ns) {
  // The sources are asked outside the lock: their calls wait up to their deadlines, and queries
  // (qrmctl, /metrics) must not wait with them.
  std::optional<Inventory> inventory;
  if (!last_inventory_ || now - *last_inventory_ >= options_.inventory_period_s) {
    inventory = Inventory{host_->Fetch(), runtime_->ListContainers()};
    last_inventory_ = now;
  }
  MutexLock lock(mu_);
  if (inventory) ApplyInventory(now, std::move(*inventory));
  if (options_.monotonic_ns) mono_ns = options_.monotonic_ns();
  TickUsage tick = sampler_.Sample(state_.containers, now, mono_ns);
  Record(tick);
  Step(tick);
  SizePools(now);
  state_.last_tick = std::move(tick);
  if (!last_gc_ || now - *last_gc_ >= 60) {
    state_.store.CollectGarbage(now);
    last_gc_ = now;
  }
}

void Agent::WithModels(const std::function<void(Predictors&)>& f) {
  MutexLock lock(mu_);
  f(predictors_);
}

void Agent::ApplyInventory(int64_t now, Inventory inventory) {
  StatusOr<HostView>& host = inventory.host;
  if (host.ok()) {
    state_.host = std::move(*host);
    state_.last_host_answer = now;
    state_.host_error.clear();
  } else if (state_.host_error != host.status().ToString()) {
    state_.host_error = host.status().ToString();
    log_->warn("qrm-host: {} (keeping the last view)", state_.host_error);
  }
  StatusOr<std::vector<TrackedContainer>>& running = inventory.running;
  if (!running.ok()) {
    if (state_.runtime_error != running.status().ToString()) {
      state_.runtime_error = running.status().ToString();
      log_->warn("runtime: {} (keeping the last container list)", state_.runtime_error);
    }
    return;
  }
  state_.runtime_error.clear();
  state_.last_runtime_answer = now;
  if (!pods_retained_) {  // the models restored from checkpoints forget pods that left meanwhile
    std::set<std::string> uids;
    for (const TrackedContainer& c : *running) uids.insert(c.pod_uid);
    predictors_.RetainPods(uids);
    pods_retained_ = true;
  }
  for (TrackedContainer& c : *running) {
    if (state_.host) {
      if (auto it = state_.host->containers.find(c.Key()); it != state_.host->containers.end()) {
        c.qos_level = it->second.qos_level;
      }
    }
    c.priority = PriorityOfQosLevel(c.qos_level);
  }
  state_.containers = std::move(*running);
}

void Agent::Record(const TickUsage& tick) {
  MetricStore& store = state_.store;
  double pods_cpu = 0, pods_memory = 0;
  for (const ContainerSample& s : tick.containers) {
    const std::string key = state_.containers[s.index].Key();
    if (s.cpu) store.Add(ContainerSeries(key, Resource::kCpu), tick.time, *s.cpu);
    store.Add(ContainerSeries(key, Resource::kMemory), tick.time, s.memory);
    pods_cpu += s.cpu.value_or(0);
    pods_memory += s.memory;
  }
  state_.last_system_cpu.reset();
  state_.last_system_memory.reset();
  if (tick.node_cpu) {
    store.Add(NodeSeries(Resource::kCpu), tick.time, *tick.node_cpu);
    state_.last_system_cpu = std::max(*tick.node_cpu - pods_cpu, 0.0);
    store.Add(SystemSeries(Resource::kCpu), tick.time, *state_.last_system_cpu);
    state_.last_node_sample = tick.time;
  }
  if (tick.node_memory) {
    store.Add(NodeSeries(Resource::kMemory), tick.time, *tick.node_memory);
    state_.last_system_memory = std::max(*tick.node_memory - pods_memory, 0.0);
    store.Add(SystemSeries(Resource::kMemory), tick.time, *state_.last_system_memory);
  }
  if (auto pool = StepAccumulator::PoolUsage(tick, state_.containers)) {
    store.Add(kPoolSeries, tick.time, *pool);
  }
}

void Agent::Step(const TickUsage& tick) {
  // The pool model learns only while the host view is fresh (QoS levels known).
  const bool fresh = state_.host && tick.time - state_.last_host_answer <= options_.stale_after_s;
  const int pool_cpus = fresh ? state_.host->PoolCpus() : 0;
  auto step = steps_.Add(tick, state_.containers, pool_cpus);
  if (step) {
    predictors_.Observe(*step);
  } else if (state_.predicted_at != 0) {
    return;  // nothing new: the last prediction stands (the first tick publishes restored models')
  }
  state_.cpu = predictors_.PredictCpu(tick.time);
  state_.memory = predictors_.PredictMemory(tick.time);
  state_.pool = predictors_.PredictPool(tick.time);
  state_.predicted_at = tick.time;
}

void Agent::SizePools(int64_t now) {
  PoolSituation s;
  s.now = now;
  // Without a fresh container list the pool's usage would read low (containers missing):
  // both sources must have answered lately.
  const bool host_fresh = state_.host && now - state_.last_host_answer <= options_.stale_after_s &&
                          now - state_.last_runtime_answer <= options_.stale_after_s;
  if (host_fresh && state_.host->allocatable_cpus > 0) {
    s.pool_cpus = state_.host->PoolCpus();
    s.observed_shared = state_.host->SharedPoolSize();
  }
  if (now - state_.last_node_sample <= options_.stale_after_s) {
    auto recent = state_.store.Query(kPoolSeries, now, options_.pools.reactive_window_s);
    if (recent) s.recent_usage = recent->p90;
  }
  s.pool_model = predictors_.pool() != nullptr;
  s.predicted = state_.pool;
  pools_.Tick(s);
}

}  // namespace qrm::advisor
