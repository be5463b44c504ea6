// FakeRuntime: a CRI "runtime" for the shim's integration tests. It serves every method as a
// generic gRPC service (so it sees exactly the bytes, metadata and deadline the shim sends),
// records every call, and answers a few methods from a small in-memory pod/container store:
//
//   Version                 runtime "fake"; initial metadata x-fake-initial, trailer x-fake-trailer
//   RunPodSandbox           "sb-N", READY;   StopPodSandbox -> NOTREADY;  RemovePodSandbox
//   ListPodSandbox          the store (state filter honoured)
//   CreateContainer         "ctr-N";  StartContainer -> RUNNING;  RemoveContainer
//   ListContainers          the store, each with an annotation padded to SetListPadding bytes
//   ContainerStatus         NOT_FOUND "container \"<id>\" not found" for unknown ids
//   UpdateContainerResources, Exec (url http://127.0.0.1:10010/exec/<id>): OK
//   GetContainerEvents      server stream of 3 events (container ids e1, e2, e3)
//   /runtime.v1.RuntimeService/MadeUp   (not in our .proto) echoes "echo:" + request
//   /runtime.v1.RuntimeService/SlowCall sleeps 1 s, then answers; records cancellation
//   /qrm.test.Echo/Chat     bidi: answers each message reversed, trailer x-chat=done
//   /qrm.test.Events/Watch  server stream: one message "event-1", then stays open until
//                           cancelled (like the kubelet's GetContainerEvents)
//   anything else           UNIMPLEMENTED "fake runtime: <method> is not implemented"
// FailWith(method, status) makes a method fail with that status until cleared; SetSlow(method)
// delays its answer by 1 s.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/server.h>

#include "api/cri_runtime_v1.pb.h"

namespace qrm::shim::testing {

namespace cri = ::runtime::v1;

struct RecordedCall {
  std::string method;
  std::string request;  // the first request message's bytes
  std::multimap<std::string, std::string> metadata;
  std::chrono::system_clock::time_point deadline;
};

class FakeRuntime {
 public:
  explicit FakeRuntime(std::string socket_path);
  ~FakeRuntime();

  const std::string& socket_path() const { return socket_path_; }

  std::vector<RecordedCall> Calls(const std::string& method_suffix = "") const;
  // The requests of calls to `method_suffix`, decoded.
  template <typename Request>
  std::vector<Request> Requests(const std::string& method_suffix) const {
    std::vector<Request> out;
    for (const auto& call : Calls(method_suffix)) {
      Request r;
      r.ParseFromString(call.request);
      out.push_back(std::move(r));
    }
    return out;
  }
  void ClearCalls();

  void FailWith(const std::string& method_suffix, grpc::Status status);
  // Answers `method_suffix` only after 1 s (its effect on the store is immediate), so a test
  // can act while the shim waits for the runtime.
  void SetSlow(const std::string& method_suffix, bool slow = true);
  void ClearFailures();
  void SetListPadding(size_t bytes_per_container) { padding_ = bytes_per_container; }

  // Seeds the store directly (as if created before the shim started).
  std::string AddSandbox(const std::string& uid, const std::string& name, const std::string& ns,
                         bool ready = true);
  std::string AddContainer(const std::string& sandbox_id, const std::string& name);
  bool slow_call_cancelled() const { return slow_call_cancelled_; }
  // Calls of `method_suffix` the client (the shim) cancelled.
  int Cancellations(const std::string& method_suffix) const;

  // Answers one call: responses to write, final status, metadata to add. Used by the
  // per-call reactor; public for it only.
  struct Reply {
    std::vector<std::string> messages;
    grpc::Status status;
    std::multimap<std::string, std::string> initial, trailing;
    bool slow = false;       // answer after a 1 s sleep
    bool keep_open = false;  // do not finish at the client's half-close, only when cancelled
  };
  Reply Handle(const std::string& method, const std::string& request, bool first_message);
  void Record(RecordedCall call);
  void RunLater(std::function<void()> work);
  void SetSlowCallCancelled() { slow_call_cancelled_ = true; }
  void NoteCancelled(const std::string& method);

 private:
  class Service;
  Reply Unary(const std::string& name, const std::string& request);

  const std::string socket_path_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;

  mutable std::mutex mu_;
  std::vector<RecordedCall> calls_;
  std::vector<std::string> cancelled_;
  std::map<std::string, grpc::Status> failures_;
  std::set<std::string> slow_;
  std::map<std::string, cri::PodSandbox> sandboxes_;
  std::map<std::string, cri::Container> containers_;
  int next_id_ = 1;
  size_t padding_ = 0;
  std::vector<std::thread> workers_;
  std::atomic<bool> slow_call_cancelled_{false};
};

}  // namespace qrm::shim::testing
