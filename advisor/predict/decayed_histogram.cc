#include "advisor/predict/decayed_histogram.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <fmt/format.h>

#include "advisor/usage/stats.h"

namespace qrm::advisor {
namespace {

// Beyond 2^kMaxExponent the weights would lose precision against older ones (and overflow
// near 2^1024): the reference moves first.
constexpr double kMaxExponent = 64;

size_t BucketCount(const HistogramOptions& o) {
  const double n = std::log(o.max_value * (o.ratio - 1) / o.first_bucket + 1) / std::log(o.ratio);
  return static_cast<size_t>(std::ceil(n)) + 1;
}

}  // namespace

Status HistogramOptions::Validate() const {
  auto bad = [](const char* field, double value, const char* want) {
    return InvalidArgumentError(fmt::format("{}: invalid value {} ({})", field, value, want));
  };
  if (!(first_bucket > 0) || !std::isfinite(first_bucket)) {
    return bad("first_bucket", first_bucket, "> 0");
  }
  if (!(ratio > 1) || !std::isfinite(ratio)) return bad("ratio", ratio, "> 1");
  if (!(max_value > first_bucket) || !std::isfinite(max_value)) {
    return bad("max_value", max_value, "> first_bucket");
  }
  if (!(half_life_s > 0) || !(half_life_s <= 1e12)) {
    return bad("half_life", half_life_s, "> 0 s and <= 1e12 s");
  }
  if (!(min_weight >= 0) || !std::isfinite(min_weight)) {
    return bad("min_weight", min_weight, ">= 0");
  }
  if (BucketCount(*this) > 100000) {
    return InvalidArgumentError(fmt::format(
        "histogram: first_bucket {}, ratio {} and max_value {} make more than 100000 buckets",
        first_bucket, ratio, max_value));
  }
  return Status::Ok();
}

DecayedHistogram::DecayedHistogram(const HistogramOptions& options) : options_(options) {
  assert(options_.Validate().ok());
  if (!options_.Validate().ok()) options_ = HistogramOptions{};
  bucket_count_ = BucketCount(options_);
}

double DecayedHistogram::UpperEdge(size_t i) const {
  // The last bucket holds everything above max_value and has no upper edge: its start, as
  // Koordinator (and the VPA histogram it comes from) answers.
  return i + 1 < bucket_count_ ? BucketStart(i + 1) : BucketStart(i);
}

size_t DecayedHistogram::BucketOf(double value) const {
  if (!(value >= options_.first_bucket)) return 0;  // also NaN
  const double i = std::floor(std::log(value * (options_.ratio - 1) / options_.first_bucket + 1) /
                              std::log(options_.ratio));
  return std::min(static_cast<size_t>(std::max(i, 0.0)), bucket_count_ - 1);
}

double DecayedHistogram::BucketStart(size_t i) const {
  return options_.first_bucket * (std::pow(options_.ratio, static_cast<double>(i)) - 1) /
         (options_.ratio - 1);
}

void DecayedHistogram::Add(double value, double weight, int64_t time) {
  if (!(weight > 0) || !std::isfinite(weight) || !std::isfinite(value)) return;
  if (!has_reference_) {
    const auto half_life = static_cast<int64_t>(std::max(1.0, options_.half_life_s));
    reference_ = FloorToMultiple(time, half_life);
    has_reference_ = true;
  }
  if (static_cast<double>(time - reference_) / options_.half_life_s > kMaxExponent) Rebase(time);
  const double scaled =
      weight * std::exp2(static_cast<double>(time - reference_) / options_.half_life_s);
  const size_t bucket = BucketOf(std::max(value, 0.0));
  Cover(bucket);
  weights_[bucket - first_] += scaled;
  total_ += scaled;
}

// A new vector of exactly the run's size (growing in place would leave up to as much capacity
// unused); the run only widens when usage reaches a new low or high.
void DecayedHistogram::Cover(size_t bucket) {
  if (weights_.empty()) {
    first_ = bucket;
    weights_.assign(1, 0.0);
    return;
  }
  const size_t last = first_ + weights_.size() - 1;
  if (bucket >= first_ && bucket <= last) return;
  const size_t from = std::min(first_, bucket);
  std::vector<double> wider(std::max(last, bucket) - from + 1, 0.0);
  std::copy(weights_.begin(), weights_.end(),
            wider.begin() + static_cast<ptrdiff_t>(first_ - from));
  weights_ = std::move(wider);
  first_ = from;
}

void DecayedHistogram::Trim() {
  const auto nonzero = [](double w) { return w != 0; };
  const auto begin = std::find_if(weights_.begin(), weights_.end(), nonzero);
  if (begin == weights_.end()) {
    weights_ = {};
    first_ = 0;
    return;
  }
  const auto end = std::find_if(weights_.rbegin(), weights_.rend(), nonzero).base();
  if (begin == weights_.begin() && end == weights_.end()) return;
  first_ += static_cast<size_t>(begin - weights_.begin());
  weights_ = std::vector<double>(begin, end);
}

void DecayedHistogram::Rebase(int64_t time) {
  const auto half_life = static_cast<int64_t>(std::max(1.0, options_.half_life_s));
  const int64_t next = FloorToMultiple(time, half_life);
  const double factor = std::exp2(-static_cast<double>(next - reference_) / options_.half_life_s);
  total_ = 0;
  for (double& w : weights_) {
    w *= factor;
    if (w < options_.min_weight) w = 0;
    total_ += w;
  }
  Trim();
  reference_ = next;
}

double DecayedHistogram::Percentile(double q) const {
  if (empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double target = q * total_;
  double cumulative = 0;
  size_t last_nonempty = 0;
  for (size_t k = 0; k < weights_.size(); ++k) {
    if (weights_[k] < options_.min_weight) continue;
    last_nonempty = first_ + k;
    cumulative += weights_[k];
    if (cumulative >= target) return UpperEdge(first_ + k);
  }
  return UpperEdge(last_nonempty);  // rounding left the target a hair above the sum
}

bool DecayedHistogram::empty() const {
  return !(total_ >= options_.min_weight);
}

double DecayedHistogram::TotalWeight() const {
  return total_;
}

std::vector<double> DecayedHistogram::weights() const {
  std::vector<double> dense(bucket_count_, 0.0);
  std::copy(weights_.begin(), weights_.end(), dense.begin() + static_cast<ptrdiff_t>(first_));
  return dense;
}

Status DecayedHistogram::Restore(int64_t reference, std::vector<double> weights,
                                 std::optional<double> total) {
  if (weights.size() != bucket_count_) {
    return InvalidArgumentError(fmt::format(
        "histogram: {} bucket weights where these options have {}", weights.size(), bucket_count_));
  }
  double sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0) || !std::isfinite(weights[i])) {
      return InvalidArgumentError(
          fmt::format("histogram: bucket {}: invalid weight {} (>= 0)", i, weights[i]));
    }
    sum += weights[i];
  }
  if (total && (!(*total >= 0) || !std::isfinite(*total))) {
    return InvalidArgumentError(fmt::format("histogram: invalid total weight {} (>= 0)", *total));
  }
  weights_ = std::move(weights);
  first_ = 0;
  Trim();
  weights_.shrink_to_fit();
  total_ = total.value_or(sum);
  reference_ = reference;
  has_reference_ = true;
  return Status::Ok();
}

}  // namespace qrm::advisor
