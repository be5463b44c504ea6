#include "qrm/admin/throttle_calls.h"

#include <fmt/format.h>

#include "common/log.h"

namespace qrm::admin {
namespace adm = ::qrm::admin::v1;
namespace {

constexpr int64_t kDefaultPeriodUs = 100000;

std::string StateOf(const throttle::ThrottleStore& store, const throttle::CpuThrottle& t) {
  if (t.restoring) return "restoring";
  return store.IsPending({t.pod_uid, t.container}) ? "pending" : "applied";
}

adm::CpuThrottle ToProto(const throttle::ThrottleStore& store, const throttle::CpuThrottle& t) {
  adm::CpuThrottle out;
  out.set_pod_uid(t.pod_uid);
  out.set_container(t.container);
  out.set_quota_us(t.quota_us);
  out.set_period_us(t.period_us);
  out.set_restore_quota_us(t.restore_quota_us);
  out.set_restore_period_us(t.restore_period_us);
  out.set_since_unix(t.since_unix);
  out.set_expires_unix(t.expires_unix);
  out.set_owner(t.owner);
  out.set_reason(t.reason);
  out.set_state(StateOf(store, t));
  return out;
}

throttle::CpuThrottleRequest FromProto(const adm::SetCpuThrottleRequest& r) {
  throttle::CpuThrottleRequest out;
  out.pod_uid = r.pod_uid();
  out.container = r.container();
  out.quota_us = r.quota_us();
  out.period_us = r.period_us() == 0 ? kDefaultPeriodUs : r.period_us();
  out.restore_quota_us = r.restore_quota_us();
  out.restore_period_us = r.restore_period_us() == 0 ? kDefaultPeriodUs : r.restore_period_us();
  out.lease_s = r.lease_seconds();
  out.owner = r.owner();
  out.reason = r.reason();
  return out;
}

}  // namespace

StatusOr<adm::CpuThrottle> SetCpuThrottle(host::Host& host,
                                          const adm::SetCpuThrottleRequest& request) {
  const throttle::CpuThrottleRequest r = FromProto(request);
  QRM_RETURN_IF_ERROR(throttle::ValidateThrottleRequest(r));
  // Only containers the host placed: a throttle must outlive nothing it does not track.
  if (!host.state().GetContainer(r.pod_uid, r.container)) {
    return NotFoundError(
        fmt::format("pod={} container={}: not admitted by qrm-host", r.pod_uid, r.container));
  }
  QRM_ASSIGN_OR_RETURN(throttle::CpuThrottle stored, host.throttles().Set(r));
  // A renewal that changes nothing in the runtime is not pushed again.
  const throttle::ThrottleStore::Key key{r.pod_uid, r.container};
  Status pushed = host.throttles().IsPending(key) ? host.reconciler().throttle_pusher().Push(key)
                                                  : Status::Ok();
  auto log = Logger("admin");
  log->info("pod={} container={}: CPU throttle {} us per {} us by {} ({}), lease until {}{}",
            r.pod_uid, r.container, r.quota_us, r.period_us, r.owner, r.reason, stored.expires_unix,
            pushed.ok() ? "" : "; push pending: " + pushed.message());
  auto now = host.throttles().Get(r.pod_uid, r.container);
  adm::CpuThrottle out = ToProto(host.throttles(), now ? *now : stored);
  if (!pushed.ok()) out.set_push_error(pushed.message());
  return out;
}

StatusOr<adm::ClearCpuThrottleResponse> ClearCpuThrottle(
    host::Host& host, const adm::ClearCpuThrottleRequest& request) {
  adm::ClearCpuThrottleResponse out;
  QRM_ASSIGN_OR_RETURN(bool was, host.throttles().Clear(request.pod_uid(), request.container()));
  out.set_was_throttled(was);
  if (!was) return out;
  Status pushed =
      host.reconciler().throttle_pusher().Push({request.pod_uid(), request.container()});
  const bool restored = !host.throttles().Get(request.pod_uid(), request.container()).has_value();
  out.set_state(restored ? "restored" : "restoring");
  Logger("admin")->info("pod={} container={}: CPU throttle cleared, {}{}", request.pod_uid(),
                        request.container(), out.state(),
                        pushed.ok() ? "" : " (push pending: " + pushed.message() + ")");
  return out;
}

adm::ListCpuThrottlesResponse ListCpuThrottles(host::Host& host) {
  adm::ListCpuThrottlesResponse out;
  for (const throttle::CpuThrottle& t : host.throttles().List()) {
    *out.add_throttles() = ToProto(host.throttles(), t);
  }
  return out;
}

}  // namespace qrm::admin
