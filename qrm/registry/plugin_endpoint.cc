#include "qrm/registry/plugin_endpoint.h"

#include <fmt/format.h>
#include <grpcpp/client_context.h>

#include "common/grpc_status.h"
#include "common/log.h"
#include "common/metrics/metrics.h"
#include "qrm/registry/plugin_answer_validation.h"

namespace qrm::registry {

namespace pb = ::resourceplugin::v1alpha1;

PluginEndpoint::PluginEndpoint(std::string resource, std::string socket_path,
                               pb::ResourcePluginOptions options, RegistrationStyle style,
                               std::shared_ptr<grpc::Channel> channel, MachineLimits limits,
                               std::set<std::string> accompanying)
    : resource_(std::move(resource)),
      socket_path_(std::move(socket_path)),
      options_(std::move(options)),
      style_(style),
      registered_at_(std::chrono::system_clock::now()),
      channel_(std::move(channel)),
      stub_(pb::ResourcePlugin::NewStub(channel_)),
      limits_(std::move(limits)),
      owned_([&] {
        accompanying.insert(resource_);
        return std::move(accompanying);
      }()) {}

template <typename Req>
Req PluginEndpoint::OwnResources(const Req& req) const {
  Req out = req;
  auto* requests = out.mutable_resource_requests();
  for (auto it = requests->begin(); it != requests->end();) {
    it = owned_.contains(it->first) ? std::next(it) : requests->erase(it);
  }
  return out;
}

bool PluginEndpoint::stopped() const {
  MutexLock lock(mu_);
  return stopped_since_.has_value();
}

namespace {

bool IsRefusal(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kResourceExhausted:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kOutOfRange:
    case StatusCode::kPermissionDenied: return true;
    default: return false;
  }
}

}  // namespace

std::optional<Clock::time_point> PluginEndpoint::stopped_since() const {
  MutexLock lock(mu_);
  return stopped_since_;
}

std::string PluginEndpoint::last_error() const {
  MutexLock lock(mu_);
  return last_error_;
}

bool PluginEndpoint::CapacityExpired(Clock::duration grace, Clock::time_point now) const {
  MutexLock lock(mu_);
  return stopped_since_.has_value() && now - *stopped_since_ >= grace;
}

void PluginEndpoint::MarkStopped(const std::string& reason) {
  {
    MutexLock lock(mu_);
    if (stopped_since_) return;
    stopped_since_ = Clock::now();
    last_error_ = reason;
  }
  Logger("registry")
      ->warn("resource={} endpoint={}: plugin stopped: {}", resource_, socket_path_, reason);
}

void PluginEndpoint::RecordError(const Status& status) {
  // A refusal (the request does not fit, is malformed, names nothing the plugin holds) is the
  // plugin working: it is the caller's error and the caller reports it. Only failures of the
  // plugin itself are its last error (qrmctl plugins, admin API).
  if (IsRefusal(status)) return;
  {
    MutexLock lock(mu_);
    last_error_ = status.ToString();
  }
  // Only a transport failure (nobody accepts on the socket any more) stops the
  // endpoint. A deadline is a slow plugin, and an UNAVAILABLE the plugin itself
  // returned is an answer: the channel is still connected in both cases.
  if (status.code() != StatusCode::kUnavailable) return;
  const grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/false);
  if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN ||
      state == GRPC_CHANNEL_IDLE) {
    MarkStopped(status.ToString());
  }
}

Status PluginEndpoint::StoppedError() const {
  return UnavailableError(
      fmt::format("resource plugin {} ({}) is stopped: {}", resource_, socket_path_, last_error()));
}

template <typename Resp>
StatusOr<Resp> PluginEndpoint::Outcome(const char* name, const grpc::Status& grpc_status, Resp resp,
                                       double seconds) {
  metrics::Default()
      .GetHistogram("qrm_plugin_rpc_duration_seconds",
                    "Latency of calls to resource plugins, by resource and method.",
                    {{"resource", resource_}, {"method", name}})
      .Observe(seconds);
  const Status status = FromGrpcStatus(grpc_status);
  if (!status.ok()) {
    metrics::Default()
        .GetCounter("qrm_plugin_rpc_errors_total",
                    "Failed calls to resource plugins, by resource, method and status code.",
                    {{"resource", resource_},
                     {"method", name},
                     {"code", std::string(StatusCodeName(status.code()))}})
        .Inc();
    RecordError(status);
    return status.WithContext(fmt::format("resource plugin {} {}", resource_, name));
  }
  return resp;
}

template <typename Req, typename Resp, typename Method>
StatusOr<Resp> PluginEndpoint::Call(const char* name, Method method, const Req& req, Timeout t) {
  if (stopped()) return StoppedError();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + t);
  Resp resp;
  metrics::Stopwatch watch;
  const grpc::Status status = ((*stub_).*method)(&ctx, req, &resp);
  return Outcome(name, status, std::move(resp), watch.Seconds());
}

template <typename Req, typename Resp, typename AsyncMethod>
std::unique_ptr<PendingCall<Resp>> PluginEndpoint::Start(AsyncMethod method, const Req& req,
                                                         Timeout t, grpc::CompletionQueue* cq) {
  auto call = std::make_unique<PendingCall<Resp>>();
  if (stopped()) {
    call->not_sent = StoppedError();
    return call;
  }
  call->context.set_deadline(std::chrono::system_clock::now() + t);
  call->reader = ((*stub_).*method)(&call->context, req, cq);
  call->reader->Finish(&call->response, &call->status, call.get());
  return call;
}

template <typename Resp, typename Validate>
StatusOr<Resp> PluginEndpoint::Finish(const char* name, PendingCall<Resp>& call,
                                      Validate validate) {
  if (call.not_sent) return *call.not_sent;
  auto answer = Outcome(name, call.status, std::move(call.response), call.seconds);
  if (!answer.ok()) return answer;
  const Status valid = validate(*answer);
  return Checked(name, std::move(answer), valid);
}

template <typename Resp>
StatusOr<Resp> PluginEndpoint::Checked(const char* name, StatusOr<Resp> answer,
                                       const Status& validation) {
  if (validation.ok()) return answer;
  metrics::Default()
      .GetCounter("qrm_plugin_invalid_answers_total",
                  "Answers of resource plugins refused by validation, by resource and method.",
                  {{"resource", resource_}, {"method", name}})
      .Inc();
  const Status error =
      validation.WithContext(fmt::format("resource plugin {} {}", resource_, name));
  Logger("registry")
      ->warn("resource={} endpoint={}: invalid answer refused: {}", resource_, socket_path_,
             error.message());
  {
    MutexLock lock(mu_);
    last_error_ = error.ToString();
  }
  return error;
}

std::unique_ptr<PluginEndpoint::HintsCall> PluginEndpoint::StartGetTopologyHints(
    const pb::ResourceRequest& req, Timeout t, grpc::CompletionQueue* cq) {
  return Start<pb::ResourceRequest, pb::ResourceHintsResponse>(
      &pb::ResourcePlugin::Stub::AsyncGetTopologyHints, OwnResources(req), t, cq);
}

StatusOr<pb::ResourceHintsResponse> PluginEndpoint::FinishGetTopologyHints(HintsCall& call) {
  return Finish("GetTopologyHints", call, [&](const pb::ResourceHintsResponse& answer) {
    return ValidateHintsAnswer(answer.resource_hints(), limits_);
  });
}

std::unique_ptr<PluginEndpoint::PodHintsCall> PluginEndpoint::StartGetPodTopologyHints(
    const pb::PodResourceRequest& req, Timeout t, grpc::CompletionQueue* cq) {
  return Start<pb::PodResourceRequest, pb::PodResourceHintsResponse>(
      &pb::ResourcePlugin::Stub::AsyncGetPodTopologyHints, OwnResources(req), t, cq);
}

StatusOr<pb::PodResourceHintsResponse> PluginEndpoint::FinishGetPodTopologyHints(
    PodHintsCall& call) {
  return Finish("GetPodTopologyHints", call, [&](const pb::PodResourceHintsResponse& answer) {
    return ValidateHintsAnswer(answer.resource_hints(), limits_);
  });
}

std::unique_ptr<PluginEndpoint::AllocateCall> PluginEndpoint::StartAllocate(
    const pb::ResourceRequest& req, Timeout t, grpc::CompletionQueue* cq) {
  return Start<pb::ResourceRequest, pb::ResourceAllocationResponse>(
      &pb::ResourcePlugin::Stub::AsyncAllocate, OwnResources(req), t, cq);
}

StatusOr<pb::ResourceAllocationResponse> PluginEndpoint::FinishAllocate(AllocateCall& call) {
  return Finish("Allocate", call, [&](const pb::ResourceAllocationResponse& answer) {
    return ValidateAllocateAnswer(answer, limits_);
  });
}

// The blocking forms: one call on a queue of its own (its answer moved out of the batch).
StatusOr<pb::ResourceHintsResponse> PluginEndpoint::GetTopologyHints(const pb::ResourceRequest& req,
                                                                     Timeout t) {
  return std::move(
      FanOut<HintsCall>(
          1, [&](size_t, grpc::CompletionQueue* cq) { return StartGetTopologyHints(req, t, cq); },
          [&](size_t, HintsCall& call) { return FinishGetTopologyHints(call); })
          .front());
}

StatusOr<pb::PodResourceHintsResponse> PluginEndpoint::GetPodTopologyHints(
    const pb::PodResourceRequest& req, Timeout t) {
  return std::move(
      FanOut<PodHintsCall>(
          1,
          [&](size_t, grpc::CompletionQueue* cq) { return StartGetPodTopologyHints(req, t, cq); },
          [&](size_t, PodHintsCall& call) { return FinishGetPodTopologyHints(call); })
          .front());
}

StatusOr<pb::ResourceAllocationResponse> PluginEndpoint::Allocate(const pb::ResourceRequest& req,
                                                                  Timeout t) {
  return std::move(FanOut<AllocateCall>(
                       1,
                       [&](size_t, grpc::CompletionQueue* cq) { return StartAllocate(req, t, cq); },
                       [&](size_t, AllocateCall& call) { return FinishAllocate(call); })
                       .front());
}

Status PluginEndpoint::RemovePod(const std::string& pod_uid, Timeout t) {
  pb::RemovePodRequest req;
  req.set_pod_uid(pod_uid);
  return Call<pb::RemovePodRequest, pb::RemovePodResponse>(
             "RemovePod", &pb::ResourcePlugin::Stub::RemovePod, req, t)
      .status();
}

StatusOr<pb::GetResourcesAllocationResponse> PluginEndpoint::GetResourcesAllocation(Timeout t) {
  auto answer = Call<pb::GetResourcesAllocationRequest, pb::GetResourcesAllocationResponse>(
      "GetResourcesAllocation", &pb::ResourcePlugin::Stub::GetResourcesAllocation, {}, t);
  if (!answer.ok()) return answer;
  const Status valid = ValidateResourcesAllocationAnswer(*answer, limits_);
  return Checked("GetResourcesAllocation", std::move(answer), valid);
}

StatusOr<pb::GetTopologyAwareResourcesResponse> PluginEndpoint::GetTopologyAwareResources(
    const pb::GetTopologyAwareResourcesRequest& req, Timeout t) {
  auto answer = Call<pb::GetTopologyAwareResourcesRequest, pb::GetTopologyAwareResourcesResponse>(
      "GetTopologyAwareResources", &pb::ResourcePlugin::Stub::GetTopologyAwareResources, req, t);
  if (!answer.ok()) return answer;
  const Status valid = ValidateTopologyAwareAnswer(*answer, limits_);
  return Checked("GetTopologyAwareResources", std::move(answer), valid);
}

StatusOr<pb::GetTopologyAwareAllocatableResourcesResponse>
PluginEndpoint::GetTopologyAwareAllocatableResources(Timeout t) {
  auto answer = Call<pb::GetTopologyAwareAllocatableResourcesRequest,
                     pb::GetTopologyAwareAllocatableResourcesResponse>(
      "GetTopologyAwareAllocatableResources",
      &pb::ResourcePlugin::Stub::GetTopologyAwareAllocatableResources, {}, t);
  if (!answer.ok()) return answer;
  const Status valid = ValidateAllocatableAnswer(*answer, limits_);
  return Checked("GetTopologyAwareAllocatableResources", std::move(answer), valid);
}

Status PluginEndpoint::PreStartContainer(const pb::PreStartContainerRequest& req, Timeout t) {
  return Call<pb::PreStartContainerRequest, pb::PreStartContainerResponse>(
             "PreStartContainer", &pb::ResourcePlugin::Stub::PreStartContainer, req, t)
      .status();
}

}  // namespace qrm::registry
