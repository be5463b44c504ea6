// The admin service's CPU throttle calls (api/admin_v1.proto: SetCpuThrottle,
// ClearCpuThrottle, ListCpuThrottles), apart from the service so they can be called directly.
#pragma once

#include "api/admin_v1.pb.h"
#include "common/status.h"
#include "qrm/host/host.h"

namespace qrm::admin {

// Validates, persists and pushes at once. A failed push is not an error (the entry stays
// pending and the reconcile tick retries it): the answer's state says "pending" and
// push_error says why.
StatusOr<::qrm::admin::v1::CpuThrottle> SetCpuThrottle(
    host::Host& host, const ::qrm::admin::v1::SetCpuThrottleRequest& request);
StatusOr<::qrm::admin::v1::ClearCpuThrottleResponse> ClearCpuThrottle(
    host::Host& host, const ::qrm::admin::v1::ClearCpuThrottleRequest& request);
::qrm::admin::v1::ListCpuThrottlesResponse ListCpuThrottles(host::Host& host);

}  // namespace qrm::admin
