#include "cri-shim/runtime_channels.h"

#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

namespace qrm::shim {
namespace {

std::shared_ptr<grpc::Channel> Dial(const Endpoint& endpoint, int max_message_bytes) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_message_bytes);
  args.SetMaxSendMessageSize(max_message_bytes);
  return grpc::CreateCustomChannel(endpoint.target, grpc::InsecureChannelCredentials(), args);
}

Status WaitFor(grpc::Channel& channel, const Endpoint& endpoint,
               std::chrono::system_clock::time_point deadline) {
  if (channel.WaitForConnected(deadline)) return Status::Ok();
  return UnavailableError(
      fmt::format("cannot connect to the container runtime at {}", endpoint.target));
}

}  // namespace

RuntimeChannels::RuntimeChannels(const Endpoint& runtime, const Endpoint& image,
                                 int max_message_bytes)
    : runtime_endpoint_(runtime), image_endpoint_(image) {
  runtime_channel_ = Dial(runtime, max_message_bytes);
  image_channel_ = image.path == runtime.path ? runtime_channel_ : Dial(image, max_message_bytes);
  runtime_generic_ = std::make_unique<grpc::GenericStub>(runtime_channel_);
  image_generic_ = std::make_unique<grpc::GenericStub>(image_channel_);
  runtime_stub_ = ::runtime::v1::RuntimeService::NewStub(runtime_channel_);
}

Status RuntimeChannels::WaitConnected(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::system_clock::now() + timeout;
  QRM_RETURN_IF_ERROR(WaitFor(*runtime_channel_, runtime_endpoint_, deadline));
  if (image_channel_ != runtime_channel_) {
    QRM_RETURN_IF_ERROR(WaitFor(*image_channel_, image_endpoint_, deadline));
  }
  return Status::Ok();
}

}  // namespace qrm::shim
