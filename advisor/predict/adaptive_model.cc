#include "advisor/predict/adaptive_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "advisor/usage/stats.h"

namespace qrm::advisor {
namespace {

constexpr int64_t kDay = 24 * 3600;
constexpr double kTailSamples = 5;

// Distance between two times of day, in seconds (0..12 h).
int64_t TimeOfDayApart(int64_t a, int64_t b) {
  const int64_t d = std::abs(((a % kDay) + kDay) % kDay - ((b % kDay) + kDay) % kDay);
  return std::min(d, kDay - d);
}

}  // namespace

Status AdaptiveOptions::Validate() const {
  if (!(violation_budget > 0 && violation_budget < 0.5)) {
    return InvalidArgumentError(
        fmt::format("violation_budget: invalid value {} (between 0 and 0.5)", violation_budget));
  }
  if (horizon_s < 60) {
    return InvalidArgumentError(fmt::format("horizon: invalid value {} s (>= 60 s)", horizon_s));
  }
  if (level_window_s < 1) {
    return InvalidArgumentError(
        fmt::format("level_window: invalid value {} s (>= 1 s)", level_window_s));
  }
  if (memory_s < horizon_s) {
    return InvalidArgumentError(
        fmt::format("memory: invalid value {} s (>= the horizon, {} s)", memory_s, horizon_s));
  }
  if (!(step_size >= 0 && step_size <= 0.1)) {
    return InvalidArgumentError(fmt::format("step_size: invalid value {} (0 to 0.1)", step_size));
  }
  if (hour_spread > 12) {
    return InvalidArgumentError(
        fmt::format("hour_spread: invalid value {} (<= 12; < 0: no time of day)", hour_spread));
  }
  if (min_residuals < 1) {
    return InvalidArgumentError(
        fmt::format("min_residuals: invalid value {} (>= 1)", min_residuals));
  }
  return Status::Ok();
}

AdaptiveModel::AdaptiveModel(const AdaptiveOptions& options)
    : options_(options), alpha_(options.violation_budget) {}

void AdaptiveModel::Observe(const Observation& step) {
  capacity_ = step.capacity;
  if (open_) open_->highest = std::max(open_->highest, ProtectedMax(step));
  recent_.emplace_back(step.time, ProtectedUsage(step));
  while (!recent_.empty() && recent_.front().first <= step.time - options_.level_window_s) {
    recent_.pop_front();
  }
  if (open_ && step.time >= open_->start + options_.horizon_s) CloseHorizon();
  if (!open_) OpenHorizon(step.time);
}

void AdaptiveModel::CloseHorizon() {
  const Horizon& h = *open_;
  const bool missed = h.highest > h.predicted;
  // Never above the budget: quiet horizons do not bank a credit of misses for later (plain
  // adaptive conformal inference would let alpha drift up through a calm week, then miss a
  // new regime for longer).
  alpha_ = std::clamp(alpha_ + options_.step_size * (options_.violation_budget - (missed ? 1 : 0)),
                      0.0, options_.violation_budget);
  if (capacity_ > 0) residuals_.push_back({h.start, (h.highest - h.level) / capacity_});
  while (!residuals_.empty() && residuals_.front().start < h.start - options_.memory_s) {
    residuals_.pop_front();
  }
  open_.reset();
}

void AdaptiveModel::OpenHorizon(int64_t now) {
  const double level = Level();
  open_ = Horizon{now, level, Predict(now).peak, level};
}

double AdaptiveModel::Level() const {
  double level = 0;
  for (const auto& [time, usage] : recent_) level = std::max(level, usage);
  return level;
}

std::optional<double> AdaptiveModel::Margin(int64_t now) const {
  std::vector<double> same_hours, all;
  for (const Residual& r : residuals_) {
    all.push_back(r.value);
    if (options_.hour_spread >= 0 &&
        TimeOfDayApart(r.start, now) <= int64_t{options_.hour_spread} * 3600) {
      same_hours.push_back(r.value);
    }
  }
  const auto enough = static_cast<size_t>(options_.min_residuals);
  if (all.size() < enough) return std::nullopt;
  // The time-of-day pool only when it is big enough for the quantile asked: with fewer than
  // kTailSamples residuals expected above it, its tail is noise and misses exceed the budget.
  const double expected_above = static_cast<double>(same_hours.size()) * alpha_;
  std::vector<double>& pool =
      same_hours.size() >= enough && expected_above >= kTailSamples ? same_hours : all;
  return NearestRank(pool, 1 - alpha_);
}

Prediction AdaptiveModel::Predict(int64_t now) const {
  Prediction out;
  if (recent_.empty()) return out;
  out.known = true;
  const std::optional<double> margin = Margin(now);
  if (!margin) {
    out.peak = capacity_;  // not enough horizons yet: nothing is reclaimed
    return out;
  }
  out.peak = std::clamp(Level() + *margin * capacity_, 0.0, capacity_);
  return out;
}

}  // namespace qrm::advisor
