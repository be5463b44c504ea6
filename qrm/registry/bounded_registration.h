// BoundedRegistrationService: the Register RPC without a thread per caller.
//
// Checking a registration dials the plugin back and may wait the whole dial timeout (10 s)
// for a socket that never answers. Served synchronously, each such call held one of gRPC's
// threads for that long, and gRPC adds threads without bound (200 calls, 200 threads). Here
// the RPC is a callback: the check runs on a small pool of its own (max_concurrent threads),
// a call arriving while max_concurrent checks are in progress is refused at once with
// RESOURCE_EXHAUSTED (the SDK retries every second), and a request whose strings are longer
// than any valid registration is refused with INVALID_ARGUMENT naming the field and its size,
// never echoing it.
#pragma once

#include <atomic>
#include <functional>

#include <boost/asio/thread_pool.hpp>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "common/log.h"
#include "common/rate_limited_log.h"
#include "common/status.h"

namespace qrm::registry {

// The most bytes a field of a valid RegisterRequest has (version "v1alpha1"; a resource
// name is at most 253 + 1 + 63; an endpoint is a socket file name).
inline constexpr size_t kMaxVersionBytes = 64;
inline constexpr size_t kMaxResourceNameBytes = 317;
inline constexpr size_t kMaxEndpointBytes = 255;
// The registration server's receive limit: a RegisterRequest is a few hundred bytes.
inline constexpr int kMaxRegisterRequestBytes = 64 * 1024;

// kInvalidArgument naming the first field over its limit, with its size only.
Status CheckRegisterRequestSizes(const ::resourceplugin::v1alpha1::RegisterRequest& request);

class BoundedRegistrationService
    : public ::resourceplugin::v1alpha1::Registration::CallbackService {
 public:
  using RegisterFn = std::function<Status(const ::resourceplugin::v1alpha1::RegisterRequest&)>;
  BoundedRegistrationService(RegisterFn accept, int max_concurrent);
  ~BoundedRegistrationService() override;

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context,
                                     const ::resourceplugin::v1alpha1::RegisterRequest* request,
                                     ::resourceplugin::v1alpha1::Empty* response) override;

 private:
  const RegisterFn accept_;
  const int max_concurrent_;
  std::atomic<int> in_flight_{0};
  RateLimitedLog refusals_{Logger("registry"), "refused registration lines"};
  boost::asio::thread_pool pool_;
};

}  // namespace qrm::registry
