#include "cluster/loadaware/estimator.h"

#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "cluster/loadaware/pod_resources.h"

namespace qrm::cluster::loadaware {
namespace {

int64_t ValueOr0(const ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  return it == list.end() ? 0 : it->second;
}

// estimatedUsedByResource, for one resource read under `real` (may be "").
int64_t EstimateOne(int64_t request, int64_t limit, std::string_view real, int64_t factor) {
  const int64_t q = limit > request ? limit : request;
  if (q == 0) {
    if (real == kCpu || real == kBatchCpu) return kDefaultMilliCpuRequest;
    if (real == kMemory || real == kBatchMemory) return kDefaultMemoryRequest;
    return 0;
  }
  // Go: int64(math.Round(float64(q) * float64(factor) / 100)), same operations in order.
  int64_t estimate =
      static_cast<int64_t>(std::round(static_cast<double>(q) * static_cast<double>(factor) / 100));
  if (limit > 0 && estimate > limit) estimate = limit;
  return estimate;
}

std::string PodName(const PodInput& pod) {
  return pod.namespace_ + "/" + pod.name;
}

Status CheckQuantity(const PodInput& pod, std::string_view what, std::string_view name,
                     int64_t value) {
  if (value >= 0 && value <= kMaxQuantity) return Status::Ok();
  return InvalidArgumentError(fmt::format("pod {}: {} {} = {} is {}", PodName(pod), what, name,
                                          value, value < 0 ? "negative" : "absurd"));
}

}  // namespace

StatusOr<ResourceVector> Estimator::EstimatePod(const PodInput& pod, PriorityClass priority) const {
  // EstimatePod's factors: the pod's own (when allowed and not empty) completed by the args'.
  std::map<std::string, int64_t> factors = args_.estimated_scaling_factors;
  if (args_.allow_customize_estimation && pod.custom_scaling_factors &&
      !pod.custom_scaling_factors->empty()) {
    for (const auto& [name, value] : *pod.custom_scaling_factors) factors[name] = value;
  }
  const ResourceList requests = PodRequests(pod);
  const ResourceList limits = PodLimits(pod);
  ResourceVector estimate{};
  for (size_t i = 0; i < vectorizer_.size(); ++i) {
    const std::string& name = vectorizer_.name(i);
    auto factor = factors.find(name);
    if (factor == factors.end()) continue;  // no factor: not estimated, 0
    if (factor->second < 0 || factor->second > kMaxCustomScalingFactor) {
      return InvalidArgumentError(
          fmt::format("pod {}: scaling factor of {} = {} is outside [0, {}]", PodName(pod), name,
                      factor->second, kMaxCustomScalingFactor));
    }
    const std::string_view real = TranslateResourceName(priority, name);
    const int64_t request = real.empty() ? 0 : ValueOr0(requests, real);
    const int64_t limit = real.empty() ? 0 : ValueOr0(limits, real);
    if (Status s = CheckQuantity(pod, "request", real, request); !s.ok()) return s;
    if (Status s = CheckQuantity(pod, "limit", real, limit); !s.ok()) return s;
    estimate[i] = EstimateOne(request, limit, real, factor->second);
    if (Status s = CheckQuantity(pod, "estimate", name, estimate[i]); !s.ok()) return s;
  }
  return estimate;
}

ResourceVector Estimator::NodeAllocatable(const NodeInput& node) const {
  if (!node.raw_allocatable || node.raw_allocatable->empty()) {
    return vectorizer_.ToVec(node.allocatable);
  }
  ResourceList merged = node.allocatable;
  for (const auto& [name, value] : *node.raw_allocatable) merged[name] = value;
  return vectorizer_.ToVec(merged);
}

std::optional<TimePoint> Estimator::EstimationDeadline(const PodInput& pod,
                                                       TimePoint assigned) const {
  int64_t after_scheduled = -1, after_initialized = -1;
  if (args_.allow_customize_estimation) {
    if (!pod.custom_seconds_after_pod_scheduled.empty()) {
      after_scheduled = ParseGoInt64(pod.custom_seconds_after_pod_scheduled).value_or(-1);
    }
    if (!pod.custom_seconds_after_initialized.empty()) {
      after_initialized = ParseGoInt64(pod.custom_seconds_after_initialized).value_or(-1);
    }
  }
  if (args_.estimated_seconds_after_pod_scheduled && after_scheduled < 0) {
    after_scheduled = *args_.estimated_seconds_after_pod_scheduled;
  }
  if (args_.estimated_seconds_after_initialized && after_initialized < 0) {
    after_initialized = *args_.estimated_seconds_after_initialized;
  }
  // Initialized wins: the PodScheduled window may have been sized for slow init containers.
  if (after_initialized > 0 && pod.initialized_time) {
    return AddGoSeconds(*pod.initialized_time, after_initialized);
  }
  if (after_scheduled > 0) return AddGoSeconds(assigned, after_scheduled);
  return std::nullopt;
}

std::optional<int64_t> ParseGoInt64(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;  // ParseUint: digits
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  if (!negative && magnitude >= kLimit) return std::nullopt;
  if (negative && magnitude > kLimit) return std::nullopt;
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

TimePoint AddGoSeconds(TimePoint t, int64_t seconds) {
  // Go's integer multiplication wraps; unsigned arithmetic gives the same bits here.
  const auto ns = static_cast<int64_t>(static_cast<uint64_t>(seconds) * 1'000'000'000ULL);
  int64_t sum = 0;
  if (__builtin_add_overflow(t.time_since_epoch().count(), ns, &sum)) {
    sum = ns > 0 ? INT64_MAX : INT64_MIN;
  }
  return TimePoint(std::chrono::nanoseconds(sum));
}

}  // namespace qrm::cluster::loadaware
