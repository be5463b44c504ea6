// Agent: the advisor's sampling loop, one Tick per interval (docs/advisor.md, "The daemon").
// A tick refreshes the container inventory when due (the runtime says which containers run
// and where their cgroups are; qrm-host says who they are and their QoS level), samples the
// node and every container (Sampler), records the samples in the metric store, forms the
// models' steps (StepAccumulator), feeds the models (Predictors) and lets the pool controller
// act. Queries (the gRPC service, metrics) read a consistent state under the agent's mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "advisor/agent/host_view.h"
#include "advisor/agent/pool_controller.h"
#include "advisor/agent/predictors.h"
#include "advisor/agent/sampler.h"
#include "advisor/agent/step_accumulator.h"
#include "advisor/agent/tracked_container.h"
#include "advisor/store/metric_store.h"
#include "common/log.h"
#include "common/mutex.h"

namespace qrm::advisor {

// Which containers run, with their cgroups (the runtime); qos_level is left empty.
class RuntimeSource {
 public:
  virtual ~RuntimeSource() = default;
  virtual StatusOr<std::vector<TrackedContainer>> ListContainers() = 0;
};

// qrm-host's view (HostClient in production).
class HostSource {
 public:
  virtual ~HostSource() = default;
  virtual StatusOr<HostView> Fetch() = 0;
};

struct AgentOptions {
  SamplerOptions sampler;
  StoreOptions store;
  int64_t step_s = 60;
  int64_t inventory_period_s = 5;
  // Inputs older than this (no node sample, no answer from qrm-host) are stale: the pool
  // controller then leaves the pools alone.
  int64_t stale_after_s = 15;
  PoolControlOptions pools;
  // The daemon's monotonic clock, read right before the counters are (a slow inventory
  // refresh must not stretch the rate's interval); unset: Tick's `mono_ns` (tests, benches).
  std::function<int64_t()> monotonic_ns;
};

// Series names in the metric store.
std::string NodeSeries(Resource r);                               // "node/cpu"
std::string SystemSeries(Resource r);                             // "system/cpu"
std::string ContainerSeries(const std::string& key, Resource r);  // "<uid>/<name>/cpu"
inline constexpr const char* kPoolSeries = "pool/cpu";

// Everything a query may read, consistent as of the last tick.
struct AgentState {
  std::vector<TrackedContainer> containers;
  std::optional<HostView> host;
  TickUsage last_tick;
  std::optional<double> last_system_cpu, last_system_memory;
  int64_t last_node_sample = 0;  // Unix seconds (0: never)
  int64_t last_host_answer = 0;
  int64_t last_runtime_answer = 0;
  std::string host_error, runtime_error;
  MetricStore store;
  Prediction cpu, memory, pool;  // as of the last step
  int64_t predicted_at = 0;
  explicit AgentState(const StoreOptions& o) : store(o) {}
};

class Agent {
 public:
  Agent(const AgentOptions& options, Predictors predictors, std::unique_ptr<HostSource> host,
        std::unique_ptr<RuntimeSource> runtime);

  // One tick at `now` (Unix seconds, never going back: AgentClock) and `mono_ns` (a monotonic
  // clock). Called from one thread.
  void Tick(int64_t now, int64_t mono_ns);

  // Runs `read` on the state under the agent's lock.
  template <typename F>
  auto Read(F&& read) const {
    MutexLock lock(mu_);
    return read(static_cast<const AgentState&>(state_), predictors_, pools_.report(),
                sampler_.counters());
  }

  const AgentOptions& options() const { return options_; }

  // Runs `f` on the models (the checkpointer) under the agent's lock.
  void WithModels(const std::function<void(Predictors&)>& f);

 private:
  // What the sources answered at an inventory refresh.
  struct Inventory {
    StatusOr<HostView> host;
    StatusOr<std::vector<TrackedContainer>> running;
  };
  void ApplyInventory(int64_t now, Inventory inventory) QRM_REQUIRES(mu_);
  void Record(const TickUsage& tick) QRM_REQUIRES(mu_);
  void Step(const TickUsage& tick) QRM_REQUIRES(mu_);
  void SizePools(int64_t now) QRM_REQUIRES(mu_);

  const AgentOptions options_;
  mutable Mutex mu_;
  AgentState state_ QRM_GUARDED_BY(mu_);
  Predictors predictors_ QRM_GUARDED_BY(mu_);
  // Used by Tick only (one thread), outside mu_.
  std::unique_ptr<HostSource> host_;
  std::unique_ptr<RuntimeSource> runtime_;
  Sampler sampler_ QRM_GUARDED_BY(mu_);
  StepAccumulator steps_ QRM_GUARDED_BY(mu_);
  PoolController pools_ QRM_GUARDED_BY(mu_);
  std::optional<int64_t> last_inventory_;
  std::optional<int64_t> last_gc_;
  bool pods_retained_ QRM_GUARDED_BY(mu_) = false;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace qrm::advisor
