// The synthetic trace the REPLAY bench lines and docs/advisor.md's table are computed on, so
// that `qrm-advisor synth` reproduces it: one 32-core machine for 8 days at 10 s, 6 Prod pods
// with a diurnal cycle and 4 batch pods (MixedPods: noise 10 % of a Prod pod's level and 20 %
// of a batch pod's; churn 0.8: a batch pod arrives late or leaves early with probability 0.8,
// a Prod pod with 0.4), 1 core of system usage, and 12 bursts a day of 3 cores for 2 minutes.
#pragma once

#include <cstdint>

#include "advisor/trace/synthetic.h"

namespace qrm::advisor {

SyntheticOptions ReferenceSyntheticOptions(uint64_t seed = 1, int days = 8);

}  // namespace qrm::advisor
