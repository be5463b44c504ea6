#include "advisor/trace/synthetic_options.h"

#include <cmath>
#include <set>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "advisor/trace/fields.h"
#include "common/quote.h"

namespace qrm::advisor::trace_internal {

namespace {

// Bounds that keep every time in int64 and a trace's samples in memory.
constexpr int64_t kMaxDuration = 366 * kSecondsPerDay;
constexpr int64_t kMaxStart = int64_t{1} << 40;
constexpr int64_t kMaxSamples = 50 * 1000 * 1000;
constexpr double kMaxBurstsPerDay = 1440;

template <typename T>
Status Invalid(std::string_view option, const T& value, std::string_view expected) {
  return InvalidArgumentError(
      fmt::format("synthetic trace: {}: invalid value {} ({})", option, value, expected));
}

bool Level(double value) {
  return std::isfinite(value) && value >= 0;
}

Status ValidatePod(const SyntheticPod& pod, std::set<std::string_view>& names) {
  if (const char* problem = IdProblem(pod.name)) return Invalid("pod", Quote(pod.name), problem);
  if (!names.insert(pod.name).second) return Invalid("pod", Quote(pod.name), "a unique name");
  const std::string name = fmt::format("pod {}", pod.name);
  const std::pair<const char*, double> levels[] = {{"request", pod.request},
                                                   {"base", pod.base},
                                                   {"diurnal_amplitude", pod.diurnal_amplitude},
                                                   {"noise_sigma", pod.noise_sigma}};
  for (const auto& [option, value] : levels) {
    if (!Level(value)) return Invalid(fmt::format("{}: {}", name, option), value, "a number >= 0");
  }
  if (pod.diurnal_amplitude > pod.base) {
    return Invalid(name + ": diurnal_amplitude", pod.diurnal_amplitude,
                   fmt::format("at most the base {}: the expected usage stays >= 0", pod.base));
  }
  if (pod.diurnal_peak < 0 || pod.diurnal_peak >= kSecondsPerDay) {
    return Invalid(name + ": diurnal_peak", pod.diurnal_peak, "a second of the day, 0..86399");
  }
  if (pod.start < 0 || pod.start >= pod.end) {
    return Invalid(name + ": start", pod.start, fmt::format(">= 0 and before its end {}", pod.end));
  }
  return Status::Ok();
}

Status ValidateBursts(const SyntheticBursts& bursts) {
  if (!std::isfinite(bursts.per_day) || bursts.per_day < 0 || bursts.per_day > kMaxBurstsPerDay) {
    return Invalid("bursts.per_day", bursts.per_day, "0..1440");
  }
  if (!Level(bursts.height)) return Invalid("bursts.height", bursts.height, "a number >= 0");
  if (bursts.duration < 1 || bursts.duration > kSecondsPerDay) {
    return Invalid("bursts.duration", bursts.duration, "1..86400 seconds");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateSyntheticOptions(const SyntheticOptions& options) {
  if (const char* problem = IdProblem(options.machine)) {
    return Invalid("machine", Quote(options.machine), problem);
  }
  if (options.step < 1 || options.step > 3600) {
    return Invalid("step", options.step, "1..3600 seconds");
  }
  if (options.duration < 1 || options.duration > kMaxDuration) {
    return Invalid("duration", options.duration, "1 second..366 days");
  }
  if (options.start < 0 || options.start > kMaxStart) {
    return Invalid("start", options.start, "0..2^40 seconds");
  }
  if (!std::isfinite(options.capacity) || options.capacity <= 0) {
    return Invalid("capacity", options.capacity, "a number > 0");
  }
  if (!Level(options.system_base)) return Invalid("system_base", options.system_base, ">= 0");
  if (!Level(options.system_sigma)) return Invalid("system_sigma", options.system_sigma, ">= 0");
  QRM_RETURN_IF_ERROR(ValidateBursts(options.bursts));
  const int64_t steps = options.duration / options.step + 1;  // whole steps
  const double samples = static_cast<double>(steps) * static_cast<double>(options.pods.size() + 1);
  if (samples > static_cast<double>(kMaxSamples)) {
    return Invalid(
        "duration", options.duration,
        fmt::format("at most {} samples in all: raise step or have fewer pods", kMaxSamples));
  }
  std::set<std::string_view> names;
  for (const SyntheticPod& pod : options.pods) QRM_RETURN_IF_ERROR(ValidatePod(pod, names));
  return Status::Ok();
}

}  // namespace qrm::advisor::trace_internal
