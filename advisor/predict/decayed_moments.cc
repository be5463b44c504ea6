#include "advisor/predict/decayed_moments.h"

#include <algorithm>
#include <cmath>

namespace qrm::advisor {
namespace {
constexpr double kMaxExponent = 64;  // as DecayedHistogram
}

void DecayedMoments::Add(double value, int64_t time) {
  if (!std::isfinite(value)) return;
  if (!has_reference_) {
    reference_ = time;
    has_reference_ = true;
  }
  if (static_cast<double>(time - reference_) / half_life_s_ > kMaxExponent) Rebase(time);
  const double w = std::exp2(static_cast<double>(time - reference_) / half_life_s_);
  weight_ += w;
  sum_ += w * value;
  sum_squares_ += w * value * value;
}

void DecayedMoments::Rebase(int64_t time) {
  const double factor = std::exp2(-static_cast<double>(time - reference_) / half_life_s_);
  weight_ *= factor;
  sum_ *= factor;
  sum_squares_ *= factor;
  reference_ = time;
}

void DecayedMoments::Restore(const State& s) {
  weight_ = s.weight;
  sum_ = s.sum;
  sum_squares_ = s.sum_squares;
  reference_ = s.reference;
  has_reference_ = s.has_reference;
}

double DecayedMoments::Mean() const {
  return weight_ > 0 ? sum_ / weight_ : 0;
}

double DecayedMoments::Stdev() const {
  if (weight_ <= 0) return 0;
  const double mean = Mean();
  // Cancellation can make the difference slightly negative for a constant series.
  return std::sqrt(std::max(sum_squares_ / weight_ - mean * mean, 0.0));
}

}  // namespace qrm::advisor
