#include "advisor/replay/reference_trace.h"

namespace qrm::advisor {

SyntheticOptions ReferenceSyntheticOptions(uint64_t seed, int days) {
  SyntheticOptions o;
  o.seed = seed;
  o.machine = "synthetic-" + std::to_string(seed);
  o.duration = days * kSecondsPerDay;
  o.step = 10;
  o.capacity = 32;
  PodMixOptions mix;
  mix.seed = seed;
  mix.prod = 6;
  mix.batch = 4;
  mix.capacity = o.capacity;
  mix.duration = o.duration;
  mix.noise = 0.1;
  mix.churn = 0.8;  // deployments come and go: level shifts a histogram is slow to follow
  o.pods = MixedPods(mix);
  o.system_base = 1;
  o.system_sigma = 0.1;
  o.bursts.per_day = 12;
  o.bursts.height = 3;
  o.bursts.duration = 120;
  return o;
}

}  // namespace qrm::advisor
