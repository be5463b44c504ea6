// PluginEndpoint: the host's handle on one registered resource plugin.
//
// Each RPC gets its own deadline. A plugin whose socket disappears or whose
// channel fails (UNAVAILABLE) becomes "stopped": its RPCs then fail fast
// without touching the network, the allocations it made stay in the host
// checkpoint, and after the grace period its capacity no longer counts.
// A slow plugin is not stopped: its calls simply fail at their deadline.
//
// Every answer is validated on arrival (plugin_answer_validation.h): an invalid one is a
// kInvalidArgument error naming the plugin, method, field and value, and its content is
// never returned to the caller, so nothing of it is stored or sent to the runtime.
//
// Requests carry only this plugin's own resources in resource_requests, as the kubewharf
// kubelet sends them: the resource it registered and the accompanying resources it places
// (RegistryOptions::accompanying_resources, e.g. NIC bandwidth for the NIC plugin). Every
// hint and Allocate call (admission, rollback, replay) passes through here, so no path can
// leak another plugin's quantities.
//
// Thread-safe; held by shared_ptr so in-flight calls survive a re-registration
// that replaces the endpoint.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <grpcpp/channel.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "common/mutex.h"
#include "common/status.h"
#include "qrm/registry/machine_limits.h"
#include "qrm/registry/pending_call.h"

namespace qrm::registry {

using Clock = std::chrono::steady_clock;

enum class RegistrationStyle { kRegisterRpc, kDirectoryWatcher };

class PluginEndpoint {
 public:
  PluginEndpoint(std::string resource, std::string socket_path,
                 ::resourceplugin::v1alpha1::ResourcePluginOptions options, RegistrationStyle style,
                 std::shared_ptr<grpc::Channel> channel, MachineLimits limits = {},
                 std::set<std::string> accompanying = {});

  const std::string& resource() const { return resource_; }
  const std::string& socket_path() const { return socket_path_; }
  const ::resourceplugin::v1alpha1::ResourcePluginOptions& options() const { return options_; }
  RegistrationStyle style() const { return style_; }
  std::chrono::system_clock::time_point registered_at() const { return registered_at_; }

  bool stopped() const;
  std::optional<Clock::time_point> stopped_since() const;
  std::string last_error() const;
  // True once the endpoint has been stopped for at least `grace`.
  bool CapacityExpired(Clock::duration grace, Clock::time_point now = Clock::now()) const;
  void MarkStopped(const std::string& reason);

  using Timeout = std::chrono::milliseconds;

  // The admission calls, sent on the caller's completion queue (pending_call.h): Start sends
  // (or, for a stopped plugin, records why not), AwaitCalls waits, Finish returns what the
  // blocking call below would have.
  using HintsCall = PendingCall<::resourceplugin::v1alpha1::ResourceHintsResponse>;
  using PodHintsCall = PendingCall<::resourceplugin::v1alpha1::PodResourceHintsResponse>;
  using AllocateCall = PendingCall<::resourceplugin::v1alpha1::ResourceAllocationResponse>;
  std::unique_ptr<HintsCall> StartGetTopologyHints(
      const ::resourceplugin::v1alpha1::ResourceRequest& req, Timeout t, grpc::CompletionQueue* cq);
  StatusOr<::resourceplugin::v1alpha1::ResourceHintsResponse> FinishGetTopologyHints(
      HintsCall& call);
  std::unique_ptr<PodHintsCall> StartGetPodTopologyHints(
      const ::resourceplugin::v1alpha1::PodResourceRequest& req, Timeout t,
      grpc::CompletionQueue* cq);
  StatusOr<::resourceplugin::v1alpha1::PodResourceHintsResponse> FinishGetPodTopologyHints(
      PodHintsCall& call);
  std::unique_ptr<AllocateCall> StartAllocate(
      const ::resourceplugin::v1alpha1::ResourceRequest& req, Timeout t, grpc::CompletionQueue* cq);
  StatusOr<::resourceplugin::v1alpha1::ResourceAllocationResponse> FinishAllocate(
      AllocateCall& call);

  StatusOr<::resourceplugin::v1alpha1::ResourceHintsResponse> GetTopologyHints(
      const ::resourceplugin::v1alpha1::ResourceRequest& req, Timeout t);
  StatusOr<::resourceplugin::v1alpha1::PodResourceHintsResponse> GetPodTopologyHints(
      const ::resourceplugin::v1alpha1::PodResourceRequest& req, Timeout t);
  StatusOr<::resourceplugin::v1alpha1::ResourceAllocationResponse> Allocate(
      const ::resourceplugin::v1alpha1::ResourceRequest& req, Timeout t);
  Status RemovePod(const std::string& pod_uid, Timeout t);
  StatusOr<::resourceplugin::v1alpha1::GetResourcesAllocationResponse> GetResourcesAllocation(
      Timeout t);
  StatusOr<::resourceplugin::v1alpha1::GetTopologyAwareResourcesResponse> GetTopologyAwareResources(
      const ::resourceplugin::v1alpha1::GetTopologyAwareResourcesRequest& req, Timeout t);
  StatusOr<::resourceplugin::v1alpha1::GetTopologyAwareAllocatableResourcesResponse>
  GetTopologyAwareAllocatableResources(Timeout t);
  Status PreStartContainer(const ::resourceplugin::v1alpha1::PreStartContainerRequest& req,
                           Timeout t);

 private:
  template <typename Req, typename Resp, typename Method>
  StatusOr<Resp> Call(const char* name, Method method, const Req& req, Timeout t);
  template <typename Req, typename Resp, typename AsyncMethod>
  std::unique_ptr<PendingCall<Resp>> Start(AsyncMethod method, const Req& req, Timeout t,
                                           grpc::CompletionQueue* cq);
  // A completed call's answer, validated by `validate` (answer -> Status).
  template <typename Resp, typename Validate>
  StatusOr<Resp> Finish(const char* name, PendingCall<Resp>& call, Validate validate);
  // A completed call's answer, counted and timed as Call does.
  template <typename Resp>
  StatusOr<Resp> Outcome(const char* name, const grpc::Status& status, Resp resp, double seconds);
  // The error of a call to this plugin while it is stopped.
  Status StoppedError() const;
  void RecordError(const Status& status);
  // `req` with resource_requests cut down to owned_.
  template <typename Req>
  Req OwnResources(const Req& req) const;
  // The answer, or the validation error with the plugin and method in front (and counted).
  template <typename Resp>
  StatusOr<Resp> Checked(const char* name, StatusOr<Resp> answer, const Status& validation);

  const std::string resource_;
  const std::string socket_path_;
  const ::resourceplugin::v1alpha1::ResourcePluginOptions options_;
  const RegistrationStyle style_;
  const std::chrono::system_clock::time_point registered_at_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::resourceplugin::v1alpha1::ResourcePlugin::Stub> stub_;
  const MachineLimits limits_;
  const std::set<std::string> owned_;  // resource_ and its accompanying resources

  mutable Mutex mu_;
  std::optional<Clock::time_point> stopped_since_ QRM_GUARDED_BY(mu_);
  std::string last_error_ QRM_GUARDED_BY(mu_);
};

}  // namespace qrm::registry
