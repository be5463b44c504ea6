#include "advisor/replay/replay.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "advisor/usage/stats.h"

namespace qrm::advisor {
namespace {

constexpr const char* kOracle = "oracle";

// The window [start, start + window) and the steps that ended inside it.
struct Window {
  int64_t start = 0;
  size_t first = 0, end = 0;  // steps[first, end)
  double actual = 0;
};

std::vector<Window> Windows(const std::vector<Observation>& steps, int64_t step_s,
                            int64_t window_s) {
  std::vector<Window> out;
  if (steps.empty()) return out;
  // Windows align with the steps' grid: t0 is the first step's start.
  const int64_t t0 = steps.front().time - step_s;
  for (size_t i = 0; i < steps.size();) {
    const int64_t k = (steps[i].time - 1 - t0) / window_s;
    Window w{t0 + k * window_s, i, i, 0};
    while (i < steps.size() && steps[i].time <= w.start + window_s) {
      w.actual = std::max(w.actual, ProtectedMax(steps[i]));
      ++i;
    }
    w.end = i;
    out.push_back(w);
  }
  return out;
}

// What a model's prediction leaves: a model with nothing to say, or a prediction that is not
// a number (a model's bug), reclaims nothing.
double Predicted(const Prediction& p, double capacity) {
  return p.known && std::isfinite(p.peak) ? p.peak : capacity;
}

void Record(Score& score, double capacity, double predicted, double actual) {
  ++score.windows;
  score.reclaimable_sum += std::max(capacity - std::max(predicted, 0.0), 0.0) / capacity;
  if (actual > predicted) {
    ++score.missed;
    score.miss_sizes.push_back((actual - predicted) / capacity);
  }
}

}  // namespace

Status ReplayOptions::Validate() const {
  if (steps.step_s < 1) {
    return InvalidArgumentError(fmt::format("step: invalid value {} s (>= 1 s)", steps.step_s));
  }
  if (window_s < steps.step_s || window_s % steps.step_s != 0) {
    return InvalidArgumentError(fmt::format(
        "window: invalid value {} s (a multiple of the step, {} s)", window_s, steps.step_s));
  }
  if (warmup_s < 0) {
    return InvalidArgumentError(fmt::format("warm-up: invalid value {} s (>= 0)", warmup_s));
  }
  QRM_RETURN_IF_ERROR(model_options.Validate());
  // Every spec builds: a typo is reported before a trace of gigabytes is read.
  for (const std::string& spec : models) {
    QRM_ASSIGN_OR_RETURN(std::unique_ptr<PeakModel> unused, MakeModel(spec, model_options));
  }
  return Status::Ok();
}

double Score::ViolationRate() const {
  return windows == 0 ? 0 : static_cast<double>(missed) / static_cast<double>(windows);
}

double Score::MeanReclaimable() const {
  return windows == 0 ? 0 : reclaimable_sum / static_cast<double>(windows);
}

double Score::MissP99() const {
  if (miss_sizes.empty()) return 0;
  std::vector<double> sizes = miss_sizes;
  return NearestRank(sizes, 0.99);
}

void Score::Merge(const Score& other) {
  windows += other.windows;
  missed += other.missed;
  reclaimable_sum += other.reclaimable_sum;
  miss_sizes.insert(miss_sizes.end(), other.miss_sizes.begin(), other.miss_sizes.end());
}

void ReplayResult::Merge(const ReplayResult& other) {
  machines += other.machines;
  steps += other.steps;
  if (models.empty()) {
    models = other.models;
    return;
  }
  for (size_t i = 0; i < models.size() && i < other.models.size(); ++i) {
    models[i].all.Merge(other.models[i].all);
    models[i].after_warmup.Merge(other.models[i].after_warmup);
  }
}

StatusOr<ReplayResult> ReplaySteps(const std::vector<Observation>& steps,
                                   const ReplayOptions& options) {
  QRM_RETURN_IF_ERROR(options.Validate());
  std::vector<std::unique_ptr<PeakModel>> models;
  ReplayResult result;
  result.machines = 1;
  result.steps = steps.size();
  for (const std::string& spec : options.models) {
    QRM_ASSIGN_OR_RETURN(std::unique_ptr<PeakModel> m, MakeModel(spec, options.model_options));
    models.push_back(std::move(m));
    result.models.push_back(ModelResult{spec, {}, {}});
  }
  result.models.push_back(ModelResult{kOracle, {}, {}});
  if (steps.empty()) return result;

  const int64_t warm_after = steps.front().time - options.steps.step_s + options.warmup_s;
  for (const Window& w : Windows(steps, options.steps.step_s, options.window_s)) {
    const double capacity = steps[w.first].capacity;
    const bool warm = w.start >= warm_after;
    // The first window is not scored: no model has seen anything yet (the advisor makes no
    // prediction then either, and pools stay as configured).
    const bool scored = w.first > 0;
    for (size_t m = 0; scored && m <= models.size(); ++m) {
      const double predicted =
          m < models.size() ? Predicted(models[m]->Predict(w.start), capacity) : w.actual;
      Record(result.models[m].all, capacity, predicted, w.actual);
      if (warm) Record(result.models[m].after_warmup, capacity, predicted, w.actual);
    }
    for (size_t i = w.first; i < w.end; ++i) {
      for (auto& model : models) model->Observe(steps[i]);
    }
  }
  return result;
}

}  // namespace qrm::advisor
