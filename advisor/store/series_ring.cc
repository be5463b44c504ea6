#include "advisor/store/series_ring.h"

#include <algorithm>
#include <cmath>

#include "advisor/store/packed_usage.h"
#include "advisor/usage/stats.h"

namespace qrm::advisor {

SeriesRing::SeriesRing(const RingOptions& options)
    : options_(options),
      raw_(static_cast<size_t>(std::max<int64_t>(1, options.raw_horizon_s / options.interval_s)),
           kNoSample),
      summaries_(
          static_cast<size_t>(std::max<int64_t>(1, options.bucket_horizon_s / options.bucket_s)),
          Summary{kNoSample, kNoSample}) {}

size_t SeriesRing::Slot(int64_t index, size_t n) {
  const auto size = static_cast<int64_t>(n);
  return static_cast<size_t>(((index % size) + size) % size);
}

int64_t SeriesRing::BucketOf(int64_t interval) const {
  return FloorDiv(interval * options_.interval_s, options_.bucket_s);
}

// The mean and max of the raw samples of `bucket` that the raw ring holds. Packed here so that
// a bucket reads the same before and after its summary is stored.
SeriesRing::Summary SeriesRing::Summarize(int64_t bucket) const {
  const int64_t per_bucket = options_.bucket_s / options_.interval_s;
  const int64_t first =
      std::max(bucket * per_bucket, newest_ - static_cast<int64_t>(raw_.size()) + 1);
  const int64_t last = std::min((bucket + 1) * per_bucket - 1, newest_);
  double sum = 0;
  float max = 0;
  int64_t count = 0;
  for (int64_t i = first; i <= last; ++i) {
    const uint16_t code = raw_[Slot(i, raw_.size())];
    if (code == kNoSample) continue;
    const float value = UnpackUsage(code);
    max = count == 0 ? value : std::max(max, value);
    sum += value;
    ++count;
  }
  if (count == 0) return Summary{kNoSample, kNoSample};
  return Summary{PackUsage(static_cast<float>(sum / static_cast<double>(count))), PackUsage(max)};
}

// Stores the summary of every bucket with a sample before `oldest_kept`, the raw interval that
// is about to become the oldest the raw ring holds.
void SeriesRing::SummarizeBefore(int64_t oldest_kept) {
  const int64_t held_from = newest_ - static_cast<int64_t>(raw_.size()) + 1;
  const int64_t first = std::max(summarized_ + 1, BucketOf(held_from));
  const int64_t last = std::min(BucketOf(oldest_kept - 1), BucketOf(newest_));
  for (int64_t b = first; b <= last; ++b) StoreSummary(b, Summarize(b));
}

void SeriesRing::StoreSummary(int64_t bucket, Summary summary) {
  const auto m = static_cast<int64_t>(summaries_.size());
  for (int64_t b = std::max(summarized_ + 1, bucket - m + 1); b < bucket; ++b) {
    summaries_[Slot(b, summaries_.size())] = Summary{kNoSample, kNoSample};
  }
  summaries_[Slot(bucket, summaries_.size())] = summary;
  summarized_ = bucket;
}

// Moves the newest raw slot to `index`: the buckets whose samples start to leave are
// summarized first, then the slots of the intervals skipped over are cleared.
void SeriesRing::AdvanceRaw(int64_t index) {
  const auto n = static_cast<int64_t>(raw_.size());
  if (newest_ == kNone) {
    summarized_ = BucketOf(index) - 1;
    newest_ = index;
    return;
  }
  SummarizeBefore(index - n + 1);
  for (int64_t i = std::max(newest_ + 1, index - n + 1); i <= index; ++i) {
    raw_[Slot(i, raw_.size())] = kNoSample;
  }
  newest_ = index;
}

void SeriesRing::Add(int64_t time, float value) {
  if (!std::isfinite(value)) return;
  const int64_t index = FloorDiv(time, options_.interval_s);
  const auto n = static_cast<int64_t>(raw_.size());
  if (newest_ != kNone && (index <= newest_ - n || BucketOf(index) <= summarized_)) return;
  if (newest_ == kNone || index > newest_) AdvanceRaw(index);
  raw_[Slot(index, raw_.size())] = PackUsage(value);
  newest_time_ = newest_time_ == kNone ? time : std::max(newest_time_, time);
}

void SeriesRing::RawWindow(int64_t from, int64_t now, WindowValues& out) const {
  const auto n = static_cast<int64_t>(raw_.size());
  for (int64_t i = newest_ - n + 1; i <= newest_; ++i) {
    const int64_t t = i * options_.interval_s;
    const uint16_t code = raw_[Slot(i, raw_.size())];
    if (t <= from || t > now || code == kNoSample) continue;
    const float value = UnpackUsage(code);
    out.max = out.values.empty() ? value : std::max(out.max, value);
    out.values.push_back(value);
  }
}

void SeriesRing::BucketWindow(int64_t from, int64_t now, WindowValues& out) const {
  const int64_t newest_bucket = BucketOf(newest_);
  const auto m = static_cast<int64_t>(summaries_.size());
  for (int64_t b = newest_bucket - m + 1; b <= newest_bucket; ++b) {
    const int64_t start = b * options_.bucket_s;
    // The buckets that overlap (from, now].
    if (start + options_.bucket_s <= from + 1 || start > now) continue;
    const Summary s = b <= summarized_ ? summaries_[Slot(b, summaries_.size())] : Summarize(b);
    if (s.mean == kNoSample) continue;
    const float max = UnpackUsage(s.max);
    out.max = out.values.empty() ? max : std::max(out.max, max);
    out.values.push_back(UnpackUsage(s.mean));
  }
}

WindowValues SeriesRing::Window(int64_t now, int64_t window_s) const {
  WindowValues out;
  if (newest_ == kNone) return out;
  if (window_s <= options_.raw_horizon_s) {
    RawWindow(now - window_s, now, out);
  } else {
    out.from_buckets = true;
    BucketWindow(now - window_s, now, out);
  }
  return out;
}

}  // namespace qrm::advisor
