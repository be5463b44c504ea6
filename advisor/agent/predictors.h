// Predictors: the models the daemon runs, selected by name (advisor/predict/model_factory.h):
// one per resource over the node and its pods (what `qrmctl prediction` shows and later the
// node report), and one over the shared pool's usage (what sizes the pools; "none": the pools
// follow recent usage only).
#pragma once

#include <memory>
#include <set>
#include <string>

#include "advisor/agent/step_accumulator.h"
#include "advisor/predict/peak_model.h"
#include "common/status.h"

namespace qrm::advisor {

struct PredictorOptions {
  std::string node_model = "koordinator";
  std::string pool_model = "koordinator";  // or "none"
};

class Predictors {
 public:
  // kInvalidArgument naming the option and the spec for an unknown model.
  static StatusOr<Predictors> Make(const PredictorOptions& options);

  void Observe(const StepObservations& step);
  // After a restore: forgets the restored pods that are not on the node any more.
  void RetainPods(const std::set<std::string>& uids);

  Prediction PredictCpu(int64_t now) const { return cpu_->Predict(now); }
  Prediction PredictMemory(int64_t now) const { return memory_->Predict(now); }
  // Not known without a pool model, or before it observed a step.
  Prediction PredictPool(int64_t now) const;

  PeakModel& cpu() { return *cpu_; }
  PeakModel& memory() { return *memory_; }
  PeakModel* pool() { return pool_.get(); }
  const PredictorOptions& options() const { return options_; }
  int64_t steps_observed() const { return steps_; }

 private:
  PredictorOptions options_;
  std::unique_ptr<PeakModel> cpu_, memory_, pool_;
  int64_t steps_ = 0;
};

}  // namespace qrm::advisor
