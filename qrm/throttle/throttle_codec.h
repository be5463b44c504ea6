// The JSON `data` of the host's throttle file <-> its entries (docs/checkpoint-format.md,
// "Throttle file"). Separate from ThrottleStore so the format is tested without files.
#pragma once

#include <vector>

#include <rapidjson/document.h>

#include "common/status.h"
#include "qrm/throttle/cpu_throttle.h"

namespace qrm::throttle {

// {"throttles": [{"pod_uid", "container", "quota_us", "period_us", "restore_quota_us",
//  "restore_period_us", "since_unix", "expires_unix", "owner", "reason", "restoring"}]}
void EncodeThrottles(const std::vector<CpuThrottle>& throttles, rapidjson::Document& out);

// The file's checksum matched, so anything wrong was written that way: kDataLoss naming the
// JSON location (throttles[2].quota_us) and the value. Unknown members are refused (a newer
// writer that adds members must bump the version).
StatusOr<std::vector<CpuThrottle>> DecodeThrottles(const rapidjson::Value& data);

}  // namespace qrm::throttle
