#include "tests/integration/cri_shim/fake_runtime.h"

#include <algorithm>
#include <deque>
#include <optional>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <unistd.h>

namespace qrm::shim::testing {
namespace {

std::string Bytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

grpc::Status NotImplemented(const std::string& method) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      "fake runtime: " + method + " is not implemented");
}

// One call: reads every message, answers each through FakeRuntime::Handle, finishes with the
// last answer's status once the client half-closed and every response is written.
class FakeCall final : public grpc::ServerGenericBidiReactor {
 public:
  FakeCall(grpc::GenericCallbackServerContext* context, FakeRuntime& runtime)
      : context_(context), runtime_(runtime) {
    record_.method = context->method();
    record_.deadline = context->deadline();
    for (const auto& [k, v] : context->client_metadata()) {
      record_.metadata.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
    }
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      if (first_) runtime_.Record(record_);
      bool finish = false;
      {
        std::lock_guard lock(mu_);
        reading_done_ = true;
        finish = !writing_ && queue_.empty() && !keep_open_;
      }
      if (finish) DoFinish();
      return;
    }
    const std::string bytes = Bytes(in_);
    const bool first = first_;
    if (first_) {
      record_.request = bytes;
      runtime_.Record(record_);
      first_ = false;
    }
    FakeRuntime::Reply reply = runtime_.Handle(record_.method, bytes, first);
    if (reply.slow) {
      runtime_.RunLater([this, reply] {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        if (context_->IsCancelled()) runtime_.SetSlowCallCancelled();
        Apply(reply);
        StartRead(&in_);
      });
      return;
    }
    Apply(reply);
    StartRead(&in_);
  }

  void OnWriteDone(bool /*ok*/) override {
    bool finish = false;
    grpc::ByteBuffer* next = nullptr;
    {
      std::lock_guard lock(mu_);
      queue_.pop_front();
      if (!queue_.empty()) {
        next = &queue_.front();
      } else {
        writing_ = false;
        finish = reading_done_ && !keep_open_;
      }
    }
    if (next != nullptr) StartWrite(next);  // never under mu_: a reaction may run inline
    if (finish) DoFinish();
  }

  void OnCancel() override {
    runtime_.NoteCancelled(record_.method);
    bool keep_open = false;
    {
      std::lock_guard lock(mu_);
      keep_open = keep_open_;
    }
    // A call kept open ends here; others end as usual (their pending read fails).
    if (keep_open) DoFinish(grpc::Status::CANCELLED);
  }
  void OnDone() override { delete this; }

 private:
  void Apply(const FakeRuntime::Reply& reply) {
    grpc::ByteBuffer* first = nullptr;
    {
      std::lock_guard lock(mu_);
      if (!metadata_sent_) {
        for (const auto& [k, v] : reply.initial) context_->AddInitialMetadata(k, v);
      }
      for (const auto& [k, v] : reply.trailing) context_->AddTrailingMetadata(k, v);
      status_ = reply.status;
      keep_open_ = keep_open_ || reply.keep_open;
      for (const auto& m : reply.messages) queue_.push_back(Buffer(m));
      if (!writing_ && !queue_.empty()) {
        writing_ = true;
        metadata_sent_ = true;
        first = &queue_.front();
      }
    }
    if (first != nullptr) StartWrite(first);
  }

  void DoFinish(std::optional<grpc::Status> override_status = std::nullopt) {
    grpc::Status status;
    {
      std::lock_guard lock(mu_);
      if (finished_) return;
      finished_ = true;
      status = override_status.value_or(status_);
    }
    Finish(status);
  }

  grpc::GenericCallbackServerContext* context_;
  FakeRuntime& runtime_;
  RecordedCall record_;
  grpc::ByteBuffer in_;
  bool first_ = true;
  std::mutex mu_;
  std::deque<grpc::ByteBuffer> queue_;
  bool writing_ = false;
  bool reading_done_ = false;
  bool metadata_sent_ = false;
  bool finished_ = false;
  bool keep_open_ = false;
  grpc::Status status_;
};

}  // namespace

class FakeRuntime::Service final : public grpc::CallbackGenericService {
 public:
  explicit Service(FakeRuntime& runtime) : runtime_(runtime) {}
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return new FakeCall(context, runtime_);
  }

 private:
  FakeRuntime& runtime_;
};

FakeRuntime::FakeRuntime(std::string socket_path)
    : socket_path_(std::move(socket_path)), service_(std::make_unique<Service>(*this)) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + socket_path_, grpc::InsecureServerCredentials());
  builder.RegisterCallbackGenericService(service_.get());
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  server_ = builder.BuildAndStart();
}

FakeRuntime::~FakeRuntime() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(3));
  for (auto& t : workers_) t.join();
}

std::vector<RecordedCall> FakeRuntime::Calls(const std::string& method_suffix) const {
  std::lock_guard lock(mu_);
  std::vector<RecordedCall> out;
  for (const auto& c : calls_) {
    if (EndsWith(c.method, method_suffix)) out.push_back(c);
  }
  return out;
}

int FakeRuntime::Cancellations(const std::string& method_suffix) const {
  std::lock_guard lock(mu_);
  return static_cast<int>(std::count_if(cancelled_.begin(), cancelled_.end(),
                                        [&](const auto& m) { return EndsWith(m, method_suffix); }));
}

void FakeRuntime::NoteCancelled(const std::string& method) {
  std::lock_guard lock(mu_);
  cancelled_.push_back(method);
}

void FakeRuntime::ClearCalls() {
  std::lock_guard lock(mu_);
  calls_.clear();
}

void FakeRuntime::Record(RecordedCall call) {
  std::lock_guard lock(mu_);
  calls_.push_back(std::move(call));
}

void FakeRuntime::RunLater(std::function<void()> work) {
  std::lock_guard lock(mu_);
  workers_.emplace_back(std::move(work));
}

void FakeRuntime::FailWith(const std::string& method_suffix, grpc::Status status) {
  std::lock_guard lock(mu_);
  failures_[method_suffix] = std::move(status);
}

void FakeRuntime::ClearFailures() {
  std::lock_guard lock(mu_);
  failures_.clear();
}

std::string FakeRuntime::AddSandbox(const std::string& uid, const std::string& name,
                                    const std::string& ns, bool ready) {
  std::lock_guard lock(mu_);
  cri::PodSandbox s;
  s.set_id("sb-" + std::to_string(next_id_++));
  s.mutable_metadata()->set_uid(uid);
  s.mutable_metadata()->set_name(name);
  s.mutable_metadata()->set_namespace_(ns);
  s.set_state(ready ? cri::SANDBOX_READY : cri::SANDBOX_NOTREADY);
  s.set_created_at(next_id_);
  sandboxes_[s.id()] = s;
  return s.id();
}

std::string FakeRuntime::AddContainer(const std::string& sandbox_id, const std::string& name) {
  std::lock_guard lock(mu_);
  cri::Container c;
  c.set_id("ctr-" + std::to_string(next_id_++));
  c.set_pod_sandbox_id(sandbox_id);
  c.mutable_metadata()->set_name(name);
  c.set_state(cri::CONTAINER_RUNNING);
  c.set_created_at(next_id_);
  (*c.mutable_labels())["io.kubernetes.pod.uid"] = sandboxes_[sandbox_id].metadata().uid();
  (*c.mutable_labels())["io.kubernetes.container.name"] = name;
  containers_[c.id()] = c;
  return c.id();
}

FakeRuntime::Reply FakeRuntime::Handle(const std::string& method, const std::string& request,
                                       bool first_message) {
  Reply reply;
  {
    std::lock_guard lock(mu_);
    for (const auto& [suffix, status] : failures_) {
      if (EndsWith(method, suffix)) {
        reply.status = status;
        return reply;
      }
    }
  }
  if (method == "/qrm.test.Echo/Chat") {
    reply.messages.push_back(std::string(request.rbegin(), request.rend()));
    reply.trailing.emplace("x-chat", "done");
    return reply;
  }
  if (method == "/qrm.test.Events/Watch") {
    if (first_message) reply.messages.push_back("event-1");
    reply.keep_open = true;
    return reply;
  }
  if (method == "/runtime.v1.RuntimeService/GetContainerEvents") {
    if (!first_message) return reply;
    for (const char* id : {"e1", "e2", "e3"}) {
      cri::ContainerEventResponse event;
      event.set_container_id(id);
      reply.messages.push_back(event.SerializeAsString());
    }
    return reply;
  }
  if (method == "/runtime.v1.RuntimeService/MadeUp") {
    reply.messages.push_back("echo:" + request);
    reply.initial.emplace("x-made-up", "yes");
    return reply;
  }
  if (method == "/runtime.v1.RuntimeService/SlowCall") {
    reply.slow = true;
    reply.messages.push_back("slow");
    return reply;
  }
  const std::string prefix = "/runtime.v1.RuntimeService/";
  if (method.rfind(prefix, 0) != 0) {
    reply.status = NotImplemented(method);
    return reply;
  }
  Reply answer = Unary(method.substr(prefix.size()), request);
  std::lock_guard lock(mu_);
  for (const std::string& suffix : slow_) {
    if (EndsWith(method, suffix)) answer.slow = true;
  }
  return answer;
}

void FakeRuntime::SetSlow(const std::string& method_suffix, bool slow) {
  std::lock_guard lock(mu_);
  if (slow) {
    slow_.insert(method_suffix);
  } else {
    slow_.erase(method_suffix);
  }
}

FakeRuntime::Reply FakeRuntime::Unary(const std::string& name, const std::string& request) {
  Reply reply;
  auto answer = [&reply](const google::protobuf::MessageLite& m) {
    reply.messages.push_back(m.SerializeAsString());
  };
  auto not_found = [&reply](const std::string& what) {
    reply.status = grpc::Status(grpc::StatusCode::NOT_FOUND, what + " not found");
  };
  std::lock_guard lock(mu_);
  if (name == "Version") {
    cri::VersionResponse r;
    r.set_version("0.1.0");
    r.set_runtime_name("fake");
    r.set_runtime_version("1.0");
    r.set_runtime_api_version("v1");
    reply.initial.emplace("x-fake-initial", "v");
    reply.trailing.emplace("x-fake-trailer", "t");
    answer(r);
  } else if (name == "RunPodSandbox") {
    cri::RunPodSandboxRequest req;
    req.ParseFromString(request);
    cri::PodSandbox s;
    s.set_id("sb-" + std::to_string(next_id_++));
    *s.mutable_metadata() = req.config().metadata();
    s.set_state(cri::SANDBOX_READY);
    s.set_created_at(next_id_);
    *s.mutable_labels() = req.config().labels();
    *s.mutable_annotations() = req.config().annotations();
    s.set_runtime_handler(req.runtime_handler());
    sandboxes_[s.id()] = s;
    cri::RunPodSandboxResponse r;
    r.set_pod_sandbox_id(s.id());
    answer(r);
  } else if (name == "StopPodSandbox" || name == "RemovePodSandbox") {
    cri::StopPodSandboxRequest req;
    req.ParseFromString(request);
    if (name == "StopPodSandbox") {
      if (auto it = sandboxes_.find(req.pod_sandbox_id()); it != sandboxes_.end()) {
        it->second.set_state(cri::SANDBOX_NOTREADY);
      }
    } else {
      sandboxes_.erase(req.pod_sandbox_id());
      std::erase_if(containers_, [&](const auto& c) {
        return c.second.pod_sandbox_id() == req.pod_sandbox_id();
      });
    }
    answer(cri::StopPodSandboxResponse());
  } else if (name == "PodSandboxStatus") {
    cri::PodSandboxStatusRequest req;
    req.ParseFromString(request);
    auto it = sandboxes_.find(req.pod_sandbox_id());
    if (it == sandboxes_.end()) {
      not_found("pod sandbox \"" + req.pod_sandbox_id() + "\"");
    } else {
      cri::PodSandboxStatusResponse r;
      r.mutable_status()->set_id(it->first);
      answer(r);
    }
  } else if (name == "ListPodSandbox") {
    cri::ListPodSandboxRequest req;
    req.ParseFromString(request);
    cri::ListPodSandboxResponse r;
    for (const auto& [id, s] : sandboxes_) {
      if (req.filter().has_state() && req.filter().state().state() != s.state()) continue;
      *r.add_items() = s;
    }
    answer(r);
  } else if (name == "CreateContainer") {
    cri::CreateContainerRequest req;
    req.ParseFromString(request);
    if (!sandboxes_.count(req.pod_sandbox_id())) {
      not_found("pod sandbox \"" + req.pod_sandbox_id() + "\"");
    } else {
      cri::Container c;
      c.set_id("ctr-" + std::to_string(next_id_++));
      c.set_pod_sandbox_id(req.pod_sandbox_id());
      *c.mutable_metadata() = req.config().metadata();
      *c.mutable_labels() = req.config().labels();
      *c.mutable_annotations() = req.config().annotations();
      c.set_state(cri::CONTAINER_CREATED);
      c.set_created_at(next_id_);
      containers_[c.id()] = c;
      cri::CreateContainerResponse r;
      r.set_container_id(c.id());
      answer(r);
    }
  } else if (name == "StartContainer" || name == "RemoveContainer" ||
             name == "UpdateContainerResources" || name == "ContainerStatus") {
    cri::StartContainerRequest req;  // container_id = 1 in all four
    req.ParseFromString(request);
    auto it = containers_.find(req.container_id());
    if (it == containers_.end()) {
      if (name == "RemoveContainer") {
        answer(cri::RemoveContainerResponse());  // idempotent, as CRI requires
      } else {
        not_found("container \"" + req.container_id() + "\"");
      }
    } else if (name == "StartContainer") {
      it->second.set_state(cri::CONTAINER_RUNNING);
      answer(cri::StartContainerResponse());
    } else if (name == "RemoveContainer") {
      containers_.erase(it);
      answer(cri::RemoveContainerResponse());
    } else if (name == "ContainerStatus") {
      cri::ContainerStatusResponse r;
      r.mutable_status()->set_id(it->first);
      r.mutable_status()->set_state(it->second.state());
      answer(r);
    } else {
      answer(cri::UpdateContainerResourcesResponse());
    }
  } else if (name == "ListContainers") {
    cri::ListContainersResponse r;
    for (const auto& [id, c] : containers_) {
      cri::Container* out = r.add_containers();
      *out = c;
      if (padding_ > 0)
        (*out->mutable_annotations())["qrm.test/padding"] = std::string(padding_, 'p');
    }
    answer(r);
  } else if (name == "Exec") {
    cri::ExecRequest req;
    req.ParseFromString(request);
    cri::ExecResponse r;
    r.set_url("http://127.0.0.1:10010/exec/" + req.container_id());
    answer(r);
  } else {
    reply.status = NotImplemented("/runtime.v1.RuntimeService/" + name);
  }
  return reply;
}

}  // namespace qrm::shim::testing
