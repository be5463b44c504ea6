// One series' recent samples in fixed memory: raw samples at the sampling interval for a
// short horizon, and per-bucket summaries (mean and max of the samples in a bucket) for a
// longer one. Both are rings whose slots stand for consecutive intervals ending at the newest
// sample: a slot's time is implied by its position, slots skipped over are cleared, so a
// sample costs O(1) (amortized), memory never grows and missing samples stay absent, never
// invented. 4 bytes per raw slot, 12 per bucket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace qrm::advisor {

struct RingOptions {
  int64_t interval_s = 1;       // sampling interval: one raw slot per interval
  int64_t raw_horizon_s = 300;  // raw samples kept
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
  explicit SeriesRing(const RingOptions& options);

  // A sample at `time` (seconds). A sample more than the raw horizon older than the newest
  // is dropped; a second one in the same interval replaces the first (the bucket keeps the
  // first). NaN and infinite values are dropped.
  void Add(int64_t time, float value);

  // The values of the samples with time in (now - window_s, now].
  WindowValues Window(int64_t now, int64_t window_s) const;

  int64_t newest() const { return newest_time_; }
  bool empty() const { return newest_ == kNone; }

 private:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  struct Bucket {
    float sum = 0, max = 0;
    uint32_t count = 0;
  };
  static size_t Slot(int64_t index, size_t n);
  void AdvanceRaw(int64_t index);
  void AddToBucket(int64_t time, float value);

  RingOptions options_;
  std::vector<float> raw_;  // NaN: no sample
  std::vector<Bucket> buckets_;
  int64_t newest_ = kNone;         // interval index of the newest raw slot
  int64_t newest_bucket_ = kNone;  // bucket index of the newest bucket
  int64_t newest_time_ = kNone;
};

}  // namespace qrm::advisor
