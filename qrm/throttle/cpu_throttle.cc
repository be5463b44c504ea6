#include "qrm/throttle/cpu_throttle.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::throttle {
namespace {

Status CheckRange(const char* field, int64_t value, int64_t low, int64_t high) {
  if (value >= low && value <= high) return Status::Ok();
  return InvalidArgumentError(fmt::format("{}={}: must be in [{}, {}]", field, value, low, high));
}

Status CheckText(const char* field, const std::string& text) {
  const bool control = std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (text.size() <= kMaxThrottleTextBytes && !control) return Status::Ok();
  return InvalidArgumentError(
      fmt::format("{}={}: must be at most {} bytes without control characters", field,
                  Quote(text.substr(0, 64)), kMaxThrottleTextBytes));
}

}  // namespace

Status ValidateThrottleRequest(const CpuThrottleRequest& r) {
  if (r.pod_uid.empty()) return InvalidArgumentError("pod_uid: must not be empty");
  if (r.container.empty()) return InvalidArgumentError("container: must not be empty");
  QRM_RETURN_IF_ERROR(CheckRange("period_us", r.period_us, kMinCpuPeriodUs, kMaxCpuPeriodUs));
  QRM_RETURN_IF_ERROR(CheckRange("quota_us", r.quota_us, kMinCpuQuotaUs, INT64_MAX / 2));
  if (r.restore_quota_us != -1) {
    QRM_RETURN_IF_ERROR(CheckRange("restore_quota_us (or -1 for no limit)", r.restore_quota_us,
                                   kMinCpuQuotaUs, INT64_MAX / 2));
  }
  QRM_RETURN_IF_ERROR(
      CheckRange("restore_period_us", r.restore_period_us, kMinCpuPeriodUs, kMaxCpuPeriodUs));
  QRM_RETURN_IF_ERROR(CheckRange("lease_seconds", r.lease_s, 1, kMaxThrottleLeaseS));
  QRM_RETURN_IF_ERROR(CheckText("owner", r.owner));
  return CheckText("reason", r.reason);
}

}  // namespace qrm::throttle
