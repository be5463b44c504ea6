// HostThrottles: the guard's CPU throttles as qrm-host holds them, through its admin API
// (SetCpuThrottle / ClearCpuThrottle / ListCpuThrottles in api/admin_v1.proto). qrm-host is
// the only writer of container resources: the guard asks, the host persists, pushes and keeps
// the quota in every request it writes for the container until the guard clears it or stops
// renewing its lease.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api/admin_v1.grpc.pb.h"
#include "common/status.h"

namespace qrm::advisor {

// What the guard asks for one container.
struct ContainerThrottle {
  std::string pod_uid, container;
  int64_t quota_us = 0;
  int64_t period_us = 100000;
  int64_t restore_quota_us = -1;  // the container's own quota before the throttle (-1: none)
  int64_t restore_period_us = 100000;
  int64_t lease_s = 300;
  std::string reason;
};

class ThrottleTarget {
 public:
  virtual ~ThrottleTarget() = default;
  virtual StatusOr<admin::v1::CpuThrottle> Set(const ContainerThrottle& throttle) = 0;
  virtual Status Clear(const std::string& pod_uid, const std::string& container) = 0;
  virtual StatusOr<std::vector<admin::v1::CpuThrottle>> List() = 0;
};

// Over qrm-host's admin socket; errors keep the host's code (NOT_FOUND for a container it did
// not admit, INVALID_ARGUMENT naming the field) and name the socket.
class HostThrottles : public ThrottleTarget {
 public:
  inline static const std::string kOwner = "qrm-advisor";

  HostThrottles(std::string socket, std::chrono::milliseconds timeout);
  StatusOr<admin::v1::CpuThrottle> Set(const ContainerThrottle& throttle) override;
  Status Clear(const std::string& pod_uid, const std::string& container) override;
  // The throttles this advisor holds (owner kOwner), e.g. after its own restart.
  StatusOr<std::vector<admin::v1::CpuThrottle>> List() override;

 private:
  Status Call(const char* what, const grpc::Status& s) const;

  std::string socket_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<admin::v1::Admin::Stub> stub_;
};

}  // namespace qrm::advisor
