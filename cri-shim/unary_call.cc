#include "cri-shim/unary_call.h"

#include <future>

#include <boost/asio/post.hpp>

#include "cri-shim/interceptors.h"
#include "cri-shim/metadata.h"

namespace qrm::shim {

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
  ForwardAsync([this](const grpc::Status& status) {
    if (status.ok()) deps_.interceptors.RecordSandbox(*this, *response_);
    Reply(status);
  });
}

void UnaryCall::RunOnPool() {
  boost::asio::post(deps_.pool, [this] {
    Answer answer = deps_.interceptors.Handle(method_.intercept, *this);
    *response_ = std::move(answer.response);
    Reply(answer.status);
  });
}

grpc::Status UnaryCall::Forward(const grpc::ByteBuffer& request, grpc::ByteBuffer* response) {
  client_context_ = ForwardingContext(*context_);
  std::promise<grpc::Status> result;
  deps_.channels.generic(method_.image_service)
      .UnaryCall(client_context_.get(), method_.full_name, grpc::StubOptions(), &request, response,
                 [&result](const grpc::Status& s) { result.set_value(s); });
  return result.get_future().get();
}

void UnaryCall::Reply(const grpc::Status& status) {
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
