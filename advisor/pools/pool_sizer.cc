#include "advisor/pools/pool_sizer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace qrm::advisor {

Status PoolSizerOptions::Validate() const {
  if (min_shared_cpus < 0) {
    return InvalidArgumentError(fmt::format("min_shared_cpus {}: must be >= 0", min_shared_cpus));
  }
  if (min_reclaimed_cpus < 0) {
    return InvalidArgumentError(
        fmt::format("min_reclaimed_cpus {}: must be >= 0", min_reclaimed_cpus));
  }
  if (max_grow < 1) return InvalidArgumentError(fmt::format("max_grow {}: must be >= 1", max_grow));
  if (max_shrink < 1) {
    return InvalidArgumentError(fmt::format("max_shrink {}: must be >= 1", max_shrink));
  }
  if (shrink_interval_s < 0) {
    return InvalidArgumentError(
        fmt::format("shrink_interval {}s: must be >= 0", shrink_interval_s));
  }
  return Status::Ok();
}

PoolSizer::Range PoolSizer::SharedRange(int free_cpus) const {
  const int reclaimed_min = std::clamp(options_.min_reclaimed_cpus, 0, free_cpus - 1);
  Range r;
  r.highest = free_cpus - reclaimed_min;
  r.lowest = std::clamp(options_.min_shared_cpus, 1, r.highest);
  return r;
}

PoolDecision PoolSizer::Decide(const PoolInputs& in) {
  const Range range = SharedRange(std::max(in.free_cpus, 1));
  const double need = std::isfinite(in.need_cores) ? std::max(in.need_cores, 0.0) : 1e9;
  PoolDecision d;
  d.target = static_cast<int>(std::clamp(std::ceil(need), static_cast<double>(range.lowest),
                                         static_cast<double>(range.highest)));
  const int previous = current_.value_or(range.highest);
  if (!current_.has_value()) {
    d.shared = range.highest;
    d.reason = "initial";
  } else if (previous > range.highest || previous < range.lowest) {
    d.shared = std::clamp(previous, range.lowest, range.highest);
    d.reason = "clamp";
  } else if (d.target > previous) {
    d.shared = std::min(d.target, previous + options_.max_grow);
    d.reason = "grow";
  } else if (d.target == previous) {
    d.shared = previous;
    d.reason = "steady";
  } else if (last_change_.has_value() && in.now - *last_change_ < options_.shrink_interval_s) {
    d.shared = previous;
    d.reason = "hold";
  } else {
    d.shared = std::max(d.target, previous - options_.max_shrink);
    d.reason = "shrink";
  }
  d.changed = !current_.has_value() || d.shared != previous;
  if (d.changed) last_change_ = in.now;
  current_ = d.shared;
  d.reclaimed = std::max(in.free_cpus, 1) - d.shared;
  return d;
}

}  // namespace qrm::advisor
