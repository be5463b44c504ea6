// GetGuard's answer (api/advisor_v1.proto) from the guard's snapshot: what `qrmctl guard` shows.
#pragma once

#include "advisor/agent/guard_runner.h"
#include "api/advisor_v1.pb.h"

namespace qrm::advisor {

// `guard` null: the daemon runs without a guard (enabled false).
v1::GetGuardResponse BuildGuard(const GuardRunner* guard);

}  // namespace qrm::advisor
