// One series' recent samples in fixed memory: raw samples at the sampling interval for a
// short horizon, and per-bucket summaries (mean and max) for a longer one. Both are rings
// whose slots stand for consecutive intervals ending at the newest sample: a slot's time is
// implied by its position, slots skipped over are cleared, so a sample costs O(1)
// (amortized), memory never grows and missing samples stay absent, never invented.
//
// The raw samples are the only record: a bucket is summarized from them when its first
// sample is about to leave the raw ring (so a replaced sample is replaced in the summary too),
// and the buckets still inside the raw ring are summarized on demand. Values are kept as
// PackedUsage (0.05 % relative error): 2 bytes per raw slot, 4 per bucket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace qrm::advisor {

struct RingOptions {
  int64_t interval_s = 1;       // sampling interval: one raw slot per interval
  int64_t raw_horizon_s = 300;  // raw samples kept (at least one bucket)
  int64_t bucket_s = 10;        // summaries: one per bucket
  int64_t bucket_horizon_s = 1800;
};

// The samples of a window: raw samples where the raw ring still holds the window, else the
// buckets' means (with their maxima for the max).
struct WindowValues {
  std::vector<float> values;
  float max = 0;
  bool from_buckets = false;
};

class SeriesRing {
 public:
  // `options` must be valid (StoreOptions::Validate).
  explicit SeriesRing(const RingOptions& options);

  // A sample at `time` (seconds). A sample more than the raw horizon older than the newest,
  // or in a bucket already summarized, is dropped; a second one in the same interval
  // replaces the first. NaN and infinite values are dropped, negative ones stored as 0.
  void Add(int64_t time, float value);

  // The values of the samples with time in (now - window_s, now].
  WindowValues Window(int64_t now, int64_t window_s) const;

  int64_t newest() const { return newest_time_; }
  bool empty() const { return newest_ == kNone; }

 private:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  struct Summary {
    uint16_t mean, max;  // kNoSample: no sample in the bucket
  };
  static size_t Slot(int64_t index, size_t n);
  int64_t BucketOf(int64_t interval) const;
  Summary Summarize(int64_t bucket) const;
  void SummarizeBefore(int64_t oldest_kept);
  void StoreSummary(int64_t bucket, Summary summary);
  void AdvanceRaw(int64_t index);
  void RawWindow(int64_t from, int64_t now, WindowValues& out) const;
  void BucketWindow(int64_t from, int64_t now, WindowValues& out) const;

  RingOptions options_;
  std::vector<uint16_t> raw_;       // PackUsage codes, kNoSample where none
  std::vector<Summary> summaries_;  // of buckets up to summarized_
  int64_t newest_ = kNone;          // interval index of the newest raw slot
  int64_t summarized_ = kNone;      // bucket index of the newest summary
  int64_t newest_time_ = kNone;
};

}  // namespace qrm::advisor
