// qrm's own model: the recent level plus a margin learned from the model's own misses, held
// to a configured violation budget (docs/advisor.md, "The adaptive model").
//
// The statistical models above predict from the whole (decayed) distribution of usage, so at
// 3 a.m. they keep room for the afternoon's peak. This one predicts the next horizon's peak
// as where usage is now plus how far it has risen within a horizon before:
//
//   peak = level + q(residuals)        level = highest representative sample of the last
//                                      `level_window_s`
//                                      residual = how far a past horizon's highest
//                                      sample rose above the level at its start
//
// q is the (1 - alpha) quantile of the residuals of the last `memory_s`, taken over the
// horizons that started within `hour_spread` hours of the same time of day when there are
// enough of them (ramps are steeper in the morning than at night), over all otherwise.
// alpha follows the misses online (adaptive conformal inference): after each horizon,
// alpha += step_size * (budget - missed), capped at the budget, so a run of misses makes the
// margin wider at once and a quiet run brings it back to the budget's quantile.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "advisor/predict/model_state.h"
#include "advisor/predict/peak_model.h"

namespace qrm::advisor {

struct AdaptiveOptions {
  double violation_budget = 0.03;  // share of horizons allowed to exceed the prediction
  int64_t horizon_s = 300;         // what one prediction covers
  int64_t level_window_s = 180;
  int64_t memory_s = 7 * 24 * 3600;
  double step_size = 0.002;  // how fast alpha follows the misses
  int hour_spread = 1;       // same time of day: +-1 h; < 0 disables time of day
  int min_residuals = 24;    // fewer: the whole capacity is predicted (nothing reclaimed)

  Status Validate() const;
};

class AdaptiveModel : public PeakModel {
 public:
  explicit AdaptiveModel(const AdaptiveOptions& options);
  std::string_view name() const override { return "adaptive"; }
  void Observe(const Observation& step) override;
  Prediction Predict(int64_t now) const override;
  // The state holds the horizon and the budget it was learned under: residuals are rises over
  // one horizon, and alpha follows the budget.
  Status SaveState(rapidjson::Value& out, JsonAllocator& a) const override;
  Status RestoreState(const rapidjson::Value& state) override;

  double alpha() const { return alpha_; }  // for tests and metrics

 private:
  struct Residual {
    int64_t start = 0;
    double value = 0;  // share of capacity
  };
  struct Horizon {
    int64_t start = 0;
    double level = 0;
    double predicted = 0;
    double highest = 0;
  };

  Status RestoreSeries(const StateReader& in);
  Status RestoreOpen(const StateReader& state);

  double Level() const;
  std::optional<double> Margin(int64_t now) const;
  void CloseHorizon();
  void OpenHorizon(int64_t now);

  AdaptiveOptions options_;
  double alpha_;
  double capacity_ = 0;
  std::deque<std::pair<int64_t, double>> recent_;  // (time, representative protected usage)
  std::deque<Residual> residuals_;
  std::optional<Horizon> open_;
};

}  // namespace qrm::advisor
