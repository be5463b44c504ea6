#include "qrm/registry/bounded_registration.h"

#include <boost/asio/post.hpp>
#include <fmt/format.h>

#include "common/grpc_status.h"
#include "common/log.h"

namespace qrm::registry {
namespace pb = ::resourceplugin::v1alpha1;

Status CheckRegisterRequestSizes(const pb::RegisterRequest& request) {
  struct Field {
    const char* name;
    size_t size;
    size_t limit;
  };
  for (const Field& f :
       {Field{"version", request.version().size(), kMaxVersionBytes},
        Field{"resource_name", request.resource_name().size(), kMaxResourceNameBytes},
        Field{"endpoint", request.endpoint().size(), kMaxEndpointBytes}}) {
    if (f.size > f.limit) {
      return InvalidArgumentError(fmt::format(
          "{} is {} bytes long; a valid registration has at most {}", f.name, f.size, f.limit));
    }
  }
  return Status::Ok();
}

BoundedRegistrationService::BoundedRegistrationService(RegisterFn accept, int max_concurrent)
    : accept_(std::move(accept)),
      max_concurrent_(max_concurrent),
      pool_(static_cast<size_t>(max_concurrent)) {}

BoundedRegistrationService::~BoundedRegistrationService() {
  pool_.join();
}

grpc::ServerUnaryReactor* BoundedRegistrationService::Register(grpc::CallbackServerContext* context,
                                                               const pb::RegisterRequest* request,
                                                               pb::Empty*) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (Status s = CheckRegisterRequestSizes(*request); !s.ok()) {
    refusals_.Log(spdlog::level::err, "registration refused: {}", s.message());
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  if (in_flight_.fetch_add(1) >= max_concurrent_) {
    in_flight_.fetch_sub(1);
    reactor->Finish(grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        fmt::format("{} registrations are already being checked (each may wait for its plugin "
                    "to answer); retry later",
                    max_concurrent_)));
    return reactor;
  }
  boost::asio::post(pool_, [this, reactor, request] {
    const Status s = accept_(*request);
    in_flight_.fetch_sub(1);
    reactor->Finish(ToGrpcStatus(s));
  });
  return reactor;
}

}  // namespace qrm::registry
