// Exponentially decayed mean and standard deviation of one series (the N-sigma models'
// statistics): a sample at time t weighs 2^((t - reference) / half_life), as in
// DecayedHistogram, so both kinds of model forget at the same rate.
#pragma once

#include <cstdint>

namespace qrm::advisor {

class DecayedMoments {
 public:
  explicit DecayedMoments(double half_life_s) : half_life_s_(half_life_s) {}

  void Add(double value, int64_t time);
  bool empty() const { return weight_ <= 0; }
  double Mean() const;
  // Population standard deviation (0 with one sample).
  double Stdev() const;

  // Raw state for the checkpoint: the sums are relative to `reference`, which is only set
  // once a sample has been added.
  struct State {
    double weight = 0;
    double sum = 0;
    double sum_squares = 0;
    int64_t reference = 0;
    bool has_reference = false;
  };
  State state() const { return {weight_, sum_, sum_squares_, reference_, has_reference_}; }
  void Restore(const State& s);

 private:
  void Rebase(int64_t time);

  double half_life_s_;
  double weight_ = 0, sum_ = 0, sum_squares_ = 0;
  int64_t reference_ = 0;
  bool has_reference_ = false;
};

}  // namespace qrm::advisor
