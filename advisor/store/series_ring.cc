#include "advisor/store/series_ring.h"

#include <algorithm>
#include <cmath>

#include "advisor/usage/stats.h"

namespace qrm::advisor {
namespace {

constexpr float kMissing = std::numeric_limits<float>::quiet_NaN();

}  // namespace

SeriesRing::SeriesRing(const RingOptions& options)
    : options_(options),
      raw_(static_cast<size_t>(std::max<int64_t>(1, options.raw_horizon_s / options.interval_s)),
           kMissing),
      buckets_(
          static_cast<size_t>(std::max<int64_t>(1, options.bucket_horizon_s / options.bucket_s))) {}

size_t SeriesRing::Slot(int64_t index, size_t n) {
  const auto size = static_cast<int64_t>(n);
  return static_cast<size_t>(((index % size) + size) % size);
}

// Moves the newest raw slot to `index`, clearing the slots of the intervals skipped over.
void SeriesRing::AdvanceRaw(int64_t index) {
  const auto n = static_cast<int64_t>(raw_.size());
  const int64_t first = newest_ == kNone ? index : std::max(newest_ + 1, index - n + 1);
  for (int64_t i = first; i <= index; ++i) raw_[Slot(i, raw_.size())] = kMissing;
  newest_ = index;
}

void SeriesRing::Add(int64_t time, float value) {
  if (!std::isfinite(value)) return;
  const int64_t index = FloorDiv(time, options_.interval_s);
  const auto n = static_cast<int64_t>(raw_.size());
  if (newest_ != kNone && index <= newest_ - n) return;  // older than the raw horizon
  if (newest_ == kNone || index > newest_) AdvanceRaw(index);
  float& slot = raw_[Slot(index, raw_.size())];
  const bool replacing = !std::isnan(slot);
  slot = value;
  if (!replacing) AddToBucket(time, value);
  newest_time_ = newest_time_ == kNone ? time : std::max(newest_time_, time);
}

void SeriesRing::AddToBucket(int64_t time, float value) {
  const int64_t index = FloorDiv(time, options_.bucket_s);
  const auto n = static_cast<int64_t>(buckets_.size());
  if (newest_bucket_ != kNone && index <= newest_bucket_ - n) return;
  if (newest_bucket_ == kNone || index > newest_bucket_) {
    const int64_t first =
        newest_bucket_ == kNone ? index : std::max(newest_bucket_ + 1, index - n + 1);
    for (int64_t i = first; i <= index; ++i) buckets_[Slot(i, buckets_.size())] = Bucket{};
    newest_bucket_ = index;
  }
  Bucket& b = buckets_[Slot(index, buckets_.size())];
  b.max = b.count == 0 ? value : std::max(b.max, value);
  b.sum += value;
  ++b.count;
}

WindowValues SeriesRing::Window(int64_t now, int64_t window_s) const {
  WindowValues out;
  if (newest_ == kNone) return out;
  const int64_t from = now - window_s;  // exclusive
  auto take = [&](float value, float max) {
    out.max = out.values.empty() ? max : std::max(out.max, max);
    out.values.push_back(value);
  };
  if (window_s <= options_.raw_horizon_s) {
    const auto n = static_cast<int64_t>(raw_.size());
    for (int64_t i = newest_ - n + 1; i <= newest_; ++i) {
      const int64_t t = i * options_.interval_s;
      const float v = raw_[Slot(i, raw_.size())];
      if (t > from && t <= now && !std::isnan(v)) take(v, v);
    }
    return out;
  }
  out.from_buckets = true;
  const auto n = static_cast<int64_t>(buckets_.size());
  for (int64_t i = newest_bucket_ - n + 1; i <= newest_bucket_; ++i) {
    const int64_t start = i * options_.bucket_s;
    const Bucket& b = buckets_[Slot(i, buckets_.size())];
    // The buckets that overlap (from, now].
    if (b.count == 0 || start + options_.bucket_s <= from + 1 || start > now) continue;
    take(b.sum / static_cast<float>(b.count), b.max);
  }
  return out;
}

}  // namespace qrm::advisor
