#include "advisor/agent/predictors.h"

#include <fmt/format.h>

#include "advisor/predict/model_factory.h"

namespace qrm::advisor {

namespace {

StatusOr<std::unique_ptr<PeakModel>> Build(const std::string& spec, Resource resource,
                                           const char* option) {
  auto model = MakeModel(spec, ModelOptions::ForResource(resource));
  if (!model.ok()) {
    return InvalidArgumentError(
        fmt::format("{} \"{}\": {}", option, spec, model.status().message()));
  }
  return model;
}

}  // namespace

StatusOr<Predictors> Predictors::Make(const PredictorOptions& options) {
  Predictors p;
  p.options_ = options;
  auto cpu = Build(options.node_model, Resource::kCpu, "node_model");
  if (!cpu.ok()) return cpu.status();
  auto memory = Build(options.node_model, Resource::kMemory, "node_model");
  if (!memory.ok()) return memory.status();
  p.cpu_ = std::move(*cpu);
  p.memory_ = std::move(*memory);
  if (options.pool_model != "none") {
    auto pool = Build(options.pool_model, Resource::kCpu, "pool_model");
    if (!pool.ok()) return pool.status();
    p.pool_ = std::move(*pool);
  }
  return p;
}

void Predictors::Observe(const StepObservations& step) {
  if (step.cpu.capacity > 0) cpu_->Observe(step.cpu);
  if (step.memory.capacity > 0) memory_->Observe(step.memory);
  if (pool_ && step.pool.has_value()) pool_->Observe(*step.pool);
  steps_++;
}

void Predictors::RetainPods(const std::set<std::string>& uids) {
  cpu_->RetainPods(uids);
  memory_->RetainPods(uids);
}

Prediction Predictors::PredictPool(int64_t now) const {
  return pool_ ? pool_->Predict(now) : Prediction{};
}

}  // namespace qrm::advisor
