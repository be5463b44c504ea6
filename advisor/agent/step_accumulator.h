// StepAccumulator: turns 1 s ticks into the models' steps (docs/advisor.md, "Replay": the
// same rules online). A step is [k x step_s, (k + 1) x step_s) in Unix seconds; a series'
// representative sample is the p90 (nearest rank) of its tick values in the step and its max
// the highest. When a tick falls into a later step, the earlier step is closed and returned
// (time = its end), so a model observes a step only once everything in it was seen.
//
// Three observations per step: CPU and memory of the node with every pod (the node models),
// and the shared pool's CPU (the pool model): the summed usage of the shared_cores containers,
// with the pool CPUs (neither reserved nor dedicated) as capacity and no pods. That is what
// the shared pool must hold (Katalyst's share region provisions its containers, not the
// node's daemons, which belong on the reserved CPUs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advisor/agent/sampler.h"
#include "advisor/agent/tracked_container.h"
#include "advisor/usage/usage.h"

namespace qrm::advisor {

struct StepObservations {
  Observation cpu;
  Observation memory;
  std::optional<Observation> pool;  // none when no pool capacity was known during the step
};

class StepAccumulator {
 public:
  explicit StepAccumulator(int64_t step_s, double step_quantile = 0.9);

  // Adds one tick. `pool_cpus` is the shared + reclaimed pools' size at the tick (0: not
  // known). Returns the previous step's observations when this tick starts a new step and the
  // previous one had node samples.
  std::optional<StepObservations> Add(const TickUsage& tick,
                                      const std::vector<TrackedContainer>& containers,
                                      int pool_cpus);

  // The shared pool's usage at one tick: the shared_cores containers' CPU; nullopt when one
  // of them has no value (unreadable, vanished, no rate yet): the pool is not sized on a
  // guess.
  static std::optional<double> PoolUsage(const TickUsage& tick,
                                         const std::vector<TrackedContainer>& containers);

 private:
  struct Series {
    std::vector<double> values;
    void Add(double v) { values.push_back(v); }
  };
  struct PodSeries {
    PriorityClass priority = PriorityClass::kProd;
    double cpu_request = 0;
    Series cpu, memory;
  };

  void AddTick(const TickUsage& tick, const std::vector<TrackedContainer>& containers,
               int pool_cpus);
  StepObservations Close(int64_t end);
  void Summarize(Series& s, double& representative, double& max) const;

  int64_t step_s_;
  double quantile_;
  std::optional<int64_t> step_start_;
  Series node_cpu_, node_memory_, pool_cpu_;
  double cpu_capacity_ = 0, memory_capacity_ = 0;
  int pool_cpus_ = 0;
  std::map<std::string, PodSeries> pods_;
  struct Seen {
    int64_t first = 0, last = 0;  // Unix seconds
  };
  static constexpr int64_t kForgetPodAfterS = 1800;
  std::map<std::string, Seen> seen_;  // per pod uid
};

}  // namespace qrm::advisor
