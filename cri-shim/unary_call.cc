#include "cri-shim/unary_call.h"

#include <future>

#include <boost/asio/post.hpp>
#include <fmt/format.h>

#include "api/cri_runtime_v1.pb.h"
#include "cri-shim/byte_buffer.h"
#include "cri-shim/interceptors.h"
#include "cri-shim/metadata.h"
#include "cri-shim/refusals.h"

namespace qrm::shim {

namespace cri = ::runtime::v1;

UnaryCall::UnaryCall(grpc::CallbackServerContext* context, const MethodInfo& method,
                     MethodCounters& counters, ProxyDeps& deps, const grpc::ByteBuffer* request,
                     grpc::ByteBuffer* response)
    : context_(context),
      method_(method),
      deps_(deps),
      counters_(counters),
      request_(request),
      response_(response),
      started_(std::chrono::steady_clock::now()) {
  counters_.calls.fetch_add(1, std::memory_order_relaxed);
  // gRPC 1.51's callback unary handler runs us even when the request message never arrived
  // (cancelled, deadline expired, END_STREAM without a message, disconnect mid-message): the
  // ByteBuffer "deserializer" cannot fail, so `request` is then an invalid (null) buffer.
  // Forwarding it would hand gRPC a null message to send, which it treats as API misuse and
  // aborts the process. Such a call is answered here and nothing is forwarded.
  if (!request_->Valid()) {
    RefuseMissingRequest();
    return;
  }
  switch (method_.intercept) {
    case Intercept::kPassThrough:
      deps_.counters.passthrough_calls.fetch_add(1, std::memory_order_relaxed);
      PassThrough();
      return;
    case Intercept::kRunPodSandbox:
      deps_.counters.intercepted_calls.fetch_add(1, std::memory_order_relaxed);
      RecordSandbox();
      return;
    default:
      deps_.counters.intercepted_calls.fetch_add(1, std::memory_order_relaxed);
      RunOnPool();
      return;
  }
}

void UnaryCall::RefuseMissingRequest() {
  const grpc::Status status =
      context_->IsCancelled()
          ? grpc::Status(grpc::StatusCode::CANCELLED,
                         fmt::format("qrm: {}: cancelled before its request arrived",
                                     ShortMethodName(method_.full_name)))
          : grpc::Status(grpc::StatusCode::INTERNAL,
                         fmt::format("qrm: {}: the call ended without a request message",
                                     ShortMethodName(method_.full_name)));
  Reply(Refused(method_.full_name, RefusalReason::kNoRequest, "", status));
}

void UnaryCall::OnDone() {
  delete this;
}

void UnaryCall::ForwardAsync(std::function<void(const grpc::Status&)> done) {
  client_context_ = ForwardingContext(*context_);
  deps_.channels.generic(method_.image_service)
      .UnaryCall(client_context_.get(), method_.full_name, grpc::StubOptions(), request_, response_,
                 std::move(done));
}

void UnaryCall::PassThrough() {
  ForwardAsync([this](const grpc::Status& status) {
    const auto elapsed = std::chrono::steady_clock::now() - started_;
    deps_.counters.passthrough_latency_ns_sum.fetch_add(
        static_cast<uint64_t>(std::chrono::nanoseconds(elapsed).count()),
        std::memory_order_relaxed);
    deps_.counters.passthrough_latency_count.fetch_add(1, std::memory_order_relaxed);
    Reply(status);
  });
}

void UnaryCall::RecordSandbox() {
  cri::RunPodSandboxRequest request;
  if (!ParseByteBuffer(*request_, &request)) {
    if (auto refused = deps_.interceptors.RefuseUndecodable(method_.intercept, *this)) {
      Reply(refused->status);
      return;
    }
  }
  ForwardAsync([this](const grpc::Status& status) {
    if (status.ok()) deps_.interceptors.RecordSandbox(*this, *response_);
    Reply(status);
  });
}

void UnaryCall::RunOnPool() {
  boost::asio::post(deps_.pool, [this] {
    Answer answer;
    try {
      answer = deps_.interceptors.Handle(method_.intercept, *this);
    } catch (const std::exception& e) {  // e.g. bad_alloc: refuse the call, keep the process
      answer.status =
          Refused(method_.full_name, RefusalReason::kInternal, "",
                  grpc::Status(grpc::StatusCode::INTERNAL,
                               fmt::format("qrm: {}: internal error: {}",
                                           ShortMethodName(method_.full_name), e.what())));
    }
    response_->Swap(&answer.response);  // ByteBuffer has no move assignment
    Reply(answer.status);
  });
}

grpc::Status UnaryCall::Forward(const grpc::ByteBuffer& request, grpc::ByteBuffer* response) {
  if (!request.Valid()) {  // gRPC would abort on it; callers never pass one, but be sure
    return grpc::Status(grpc::StatusCode::INTERNAL, "qrm: no request message to forward");
  }
  client_context_ = ForwardingContext(*context_);
  std::promise<grpc::Status> result;
  deps_.channels.generic(method_.image_service)
      .UnaryCall(client_context_.get(), method_.full_name, grpc::StubOptions(), &request, response,
                 [&result](const grpc::Status& s) { result.set_value(s); });
  return result.get_future().get();
}

void UnaryCall::Reply(grpc::Status status) {
  if (status.ok() && !response_->Valid()) {
    // The generic stub accepts an OK answer without a message; sending an invalid buffer
    // back would abort the process just as a missing request would.
    status = Refused(method_.full_name, RefusalReason::kNoResponse, "",
                     grpc::Status(grpc::StatusCode::INTERNAL,
                                  fmt::format("qrm: {}: the runtime answered without a message",
                                              ShortMethodName(method_.full_name))));
  }
  if (client_context_) {
    CopyInitialMetadata(*client_context_, context_);
    CopyTrailingMetadata(*client_context_, context_);
  }
  if (!status.ok()) {
    counters_.errors.fetch_add(1, std::memory_order_relaxed);
    deps_.counters.errors.fetch_add(1, std::memory_order_relaxed);
  }
  Finish(status);
}

}  // namespace qrm::shim
