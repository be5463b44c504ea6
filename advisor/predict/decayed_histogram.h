// A histogram whose samples lose weight exponentially with age, with exponential buckets: the
// shape Koordinator's node predictor (and the VPA recommender before it) keeps per series.
//
// Bucket 0 is [0, first_bucket); bucket i >= 1 starts at first_bucket * (ratio^i - 1) /
// (ratio - 1), so bucket widths grow by `ratio`; the last bucket also holds everything above
// max_value. A sample added at time t weighs w * 2^((t - reference) / half_life): newer
// samples weigh more, which is the same as older ones decaying. When the exponent grows large
// the reference moves forward and every bucket is scaled down (values are unchanged, only
// their scale); buckets that fall below min_weight are emptied.
//
// Only the run of buckets from the lowest to the highest non-empty one is stored (a series'
// usage spans a few dozen of the ~160 buckets): the advisor keeps two per pod, and a dense
// array would be most of its model memory.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"

namespace qrm::advisor {

struct HistogramOptions {
  double first_bucket = 0.025;       // upper edge of bucket 0 (> 0)
  double ratio = 1.05;               // growth of bucket widths (> 1)
  double max_value = 1024;           // values above land in the last bucket (> first_bucket)
  double half_life_s = 12 * 3600.0;  // (> 0)
  double min_weight = 1e-4;          // lighter buckets count as empty

  // kInvalidArgument naming the field and value when an option is out of range.
  Status Validate() const;
};

class DecayedHistogram {
 public:
  // `options` must be valid (Validate); asserted in debug builds, clamped otherwise.
  explicit DecayedHistogram(const HistogramOptions& options);

  // Adds `value` (clamped to >= 0) with `weight` (> 0) as of `time` (seconds). Times may come
  // out of order; an older sample simply weighs less.
  void Add(double value, double weight, int64_t time);

  // The upper edge of the bucket where the cumulative weight first reaches q * total, for q in
  // [0, 1] (biased up by at most one bucket width, as Koordinator's; UpperEdge). 0 when
  // empty.
  double Percentile(double q) const;

  bool empty() const;
  // Total weight at the current reference time (for tests and the checkpoint).
  double TotalWeight() const;
  size_t bucket_count() const { return bucket_count_; }
  // Buckets held in memory (the non-empty run; for the memory bench and tests).
  size_t stored_bucket_count() const { return weights_.size(); }
  int64_t reference_time() const { return reference_; }
  const HistogramOptions& options() const { return options_; }

  // Bucket arithmetic, public for tests and the checkpoint.
  size_t BucketOf(double value) const;
  double BucketStart(size_t i) const;
  // What Percentile answers for bucket i: its upper edge (the last bucket: its start).
  double UpperEdge(size_t i) const;

  // Raw state for the checkpoint: every bucket's weight relative to reference_time(), which
  // is only set once a sample has been added.
  std::vector<double> weights() const;
  bool has_reference() const { return has_reference_; }
  // Restores raw state; kInvalidArgument if `weights` does not fit these options or `total`
  // is not a finite weight >= 0. `total` is TotalWeight() as saved: the running sum that Add
  // keeps can differ in its last bits from the weights summed anew, and percentiles compare
  // against it, so a restore that must predict exactly as before passes it; without it the
  // weights' sum is taken.
  Status Restore(int64_t reference, std::vector<double> weights,
                 std::optional<double> total = std::nullopt);

 private:
  // Moves the reference to `time` (rounded down to a half-life multiple) and rescales.
  void Rebase(int64_t time);
  // Makes bucket `bucket` part of the stored run.
  void Cover(size_t bucket);
  // Drops empty buckets from both ends of the stored run.
  void Trim();

  HistogramOptions options_;
  size_t bucket_count_ = 0;
  size_t first_ = 0;             // bucket index of weights_[0]
  std::vector<double> weights_;  // buckets first_ .. first_ + size - 1, exactly sized
  double total_ = 0;
  int64_t reference_ = 0;
  bool has_reference_ = false;
};

}  // namespace qrm::advisor
