// Replays usage through peak models in simulated time and scores them (docs/advisor.md,
// "Replay"): for every window of `window_s` (aligned like the steps), each model predicts at
// the window's start from the steps that ended by then; the window's actual peak is the
// highest protected sample of its steps (ProtectedMax). A window is missed when its actual
// peak exceeds the prediction. The first window is not scored (nothing was observed before).
//
// Per model: the share of missed windows, the mean reclaimable share of capacity
// (max(capacity - prediction, 0) / capacity), and the 99th percentile of a miss's size (share
// of capacity), over all windows and over those starting after the warm-up. The pseudo-model
// "oracle" predicts each window's actual peak: what a perfect model would reclaim.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "advisor/predict/model_factory.h"
#include "advisor/replay/steps.h"

namespace qrm::advisor {

struct ReplayOptions {
  StepRules steps;
  int64_t window_s = 300;
  int64_t warmup_s = 24 * 3600;
  std::vector<std::string> models;  // MakeModel specs; "oracle" is always added last
  ModelOptions model_options;

  Status Validate() const;
};

// One model's score over a set of windows; additive over machines.
struct Score {
  uint64_t windows = 0;
  uint64_t missed = 0;
  double reclaimable_sum = 0;      // sum over windows of the reclaimable share
  std::vector<double> miss_sizes;  // share of capacity, one per missed window

  double ViolationRate() const;
  double MeanReclaimable() const;
  double MissP99() const;  // 0 without misses
  void Merge(const Score& other);
};

struct ModelResult {
  std::string model;
  Score all;
  Score after_warmup;
};

struct ReplayResult {
  uint64_t machines = 0;
  uint64_t steps = 0;
  std::vector<ModelResult> models;  // in the order of ReplayOptions::models, then "oracle"

  void Merge(const ReplayResult& other);
};

// One machine's steps (FormSteps) through fresh instances of every model.
StatusOr<ReplayResult> ReplaySteps(const std::vector<Observation>& steps,
                                   const ReplayOptions& options);

}  // namespace qrm::advisor
