// How a replay turns one machine's raw samples into the steps models observe (the replay's
// rules, docs/advisor.md "Replay"):
//
// - Steps are [t0 + k * step, t0 + (k + 1) * step) with t0 the first sample's time rounded
//   down to a multiple of the step; an Observation's time is its step's end. A step without
//   samples yields no Observation.
// - A series' representative sample in a step is the `quantile` (nearest rank) of its raw
//   samples there, Koordinator's p90 of a minute by default; its max is the highest.
// - Without machine-level samples the node is the sum of its pods (representative: sum of
//   the pods' representatives; max: the Prod pods' maxima plus the others' representatives,
//   an upper bound of the protected peak).
// - A pod without a priority class is Prod; without a request, 0; its start is its first
//   sample.
#pragma once

#include <cstdint>
#include <vector>

#include "advisor/trace/machine_series.h"
#include "advisor/usage/usage.h"

namespace qrm::advisor {

struct StepRules {
  int64_t step_s = 60;
  double quantile = 0.9;
};

// kInvalidArgument for a step < 1 s, a quantile outside (0, 1] or a capacity <= 0.
StatusOr<std::vector<Observation>> FormSteps(const MachineSeries& machine, double capacity,
                                             const StepRules& rules);

}  // namespace qrm::advisor
