#include "advisor/predict/adaptive_model.h"

#include <algorithm>
#include <cmath>
#include <utility>
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

namespace {

// [[time, double], ...]: the recent samples and the residuals.
template <typename Item, typename Get>
rapidjson::Value SaveSeries(const std::deque<Item>& items, JsonAllocator& a, Get get) {
  rapidjson::Value out(rapidjson::kArrayType);
  for (const Item& item : items) {
    const auto [time, value] = get(item);
    rapidjson::Value pair(rapidjson::kArrayType);
    pair.PushBack(time, a);
    pair.PushBack(DoubleValue(value, a), a);
    out.PushBack(pair, a);
  }
  return out;
}

// Reads [[time, double], ...] with times in order (the model prunes from the front).
Status ReadSeries(const StateReader& in, const char* name,
                  const std::function<void(int64_t, double)>& add) {
  QRM_ASSIGN_OR_RETURN(const rapidjson::Value* items, in.Array(name));
  int64_t previous = -kMaxStateSeconds;
  for (rapidjson::SizeType k = 0; k < items->Size(); ++k) {
    const std::string path = fmt::format("{}[{}]", in.PathOf(name), k);
    QRM_ASSIGN_OR_RETURN(const auto pair, ReadPair((*items)[k], path));
    QRM_ASSIGN_OR_RETURN(const int64_t time, ReadTime(*pair.first, path + "[0]"));
    if (time < previous) {
      return Malformed(path + "[0]", *pair.first,
                       fmt::format("a time not before the previous one, {}", previous));
    }
    QRM_ASSIGN_OR_RETURN(const double value, ReadDouble(*pair.second, path + "[1]"));
    add(time, value);
    previous = time;
  }
  return Status::Ok();
}

}  // namespace

Status AdaptiveModel::SaveState(rapidjson::Value& out, JsonAllocator& a) const {
  out = NewState(name(), a);
  rapidjson::Value options(rapidjson::kObjectType);
  options.AddMember("horizon_s", options_.horizon_s, a);
  options.AddMember("violation_budget", DoubleValue(options_.violation_budget, a), a);
  out.AddMember("options", options, a);
  out.AddMember("alpha", DoubleValue(alpha_, a), a);
  out.AddMember("capacity", DoubleValue(capacity_, a), a);
  out.AddMember("recent", SaveSeries(recent_, a, [](const auto& sample) { return sample; }), a);
  out.AddMember("residuals",
                SaveSeries(residuals_, a,
                           [](const Residual& r) {
                             return std::pair{r.start, r.value};
                           }),
                a);
  if (open_) {
    rapidjson::Value open(rapidjson::kObjectType);
    open.AddMember("start", open_->start, a);
    open.AddMember("level", DoubleValue(open_->level, a), a);
    open.AddMember("predicted", DoubleValue(open_->predicted, a), a);
    open.AddMember("highest", DoubleValue(open_->highest, a), a);
    out.AddMember("open", open, a);
  }
  return Status::Ok();
}

Status AdaptiveModel::RestoreState(const rapidjson::Value& state) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, OpenState(state, name()));
  QRM_RETURN_IF_ERROR(
      in.OnlyMembers({"model", "options", "alpha", "capacity", "recent", "residuals", "open"}));
  QRM_ASSIGN_OR_RETURN(const StateReader options, in.Object("options"));
  QRM_RETURN_IF_ERROR(options.OnlyMembers({"horizon_s", "violation_budget"}));
  QRM_RETURN_IF_ERROR(SameOption(options, "horizon_s", options_.horizon_s));
  QRM_RETURN_IF_ERROR(SameOption(options, "violation_budget", options_.violation_budget));
  // Into a fresh model, moved in whole at the end: nothing is half-restored.
  AdaptiveModel restored(options_);
  QRM_RETURN_IF_ERROR(in.Double("alpha", &restored.alpha_, 0));
  if (restored.alpha_ > options_.violation_budget) {
    return Malformed(in.PathOf("alpha"), state["alpha"],
                     fmt::format("at most the violation budget, {}", options_.violation_budget));
  }
  QRM_RETURN_IF_ERROR(in.Double("capacity", &restored.capacity_, 0));
  QRM_RETURN_IF_ERROR(restored.RestoreSeries(in));
  if (in.Has("open")) QRM_RETURN_IF_ERROR(restored.RestoreOpen(in));
  *this = std::move(restored);
  return Status::Ok();
}

Status AdaptiveModel::RestoreSeries(const StateReader& in) {
  QRM_RETURN_IF_ERROR(ReadSeries(
      in, "recent", [&](int64_t time, double usage) { recent_.emplace_back(time, usage); }));
  return ReadSeries(in, "residuals", [&](int64_t start, double value) {
    residuals_.push_back({start, value});
  });
}

Status AdaptiveModel::RestoreOpen(const StateReader& state) {
  QRM_ASSIGN_OR_RETURN(const StateReader in, state.Object("open"));
  QRM_RETURN_IF_ERROR(in.OnlyMembers({"start", "level", "predicted", "highest"}));
  Horizon h;
  QRM_RETURN_IF_ERROR(in.Time("start", &h.start));
  QRM_RETURN_IF_ERROR(in.Double("level", &h.level));
  QRM_RETURN_IF_ERROR(in.Double("predicted", &h.predicted));
  QRM_RETURN_IF_ERROR(in.Double("highest", &h.highest));
  open_ = h;
  return Status::Ok();
}

}  // namespace qrm::advisor
