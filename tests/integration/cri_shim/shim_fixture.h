// A CRI shim in front of the FakeRuntime, with a real qrm Host (real sockets, checkpoint in a
// temp dir) whose reconcile loop and garbage collection use the shim's applier and view, and
// real plugin processes (qrm-test-plugin). Tests talk to the shim as the kubelet would.
#pragma once

#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include "api/cri_runtime_v1.grpc.pb.h"
#include "cri-shim/cri_shim.h"
#include "qrm/host/host.h"
#include "testing/child_process.h"
#include "testing/temp_dir.h"
#include "tests/integration/cri_shim/fake_runtime.h"

namespace qrm::shim::testing {

using qrm::testing::ChildProcess;
using qrm::testing::TempDir;
using qrm::testing::WaitFor;

inline constexpr int kKubeletLimit = 16 * 1024 * 1024;

// What a raw (generic) call got back.
struct RawResult {
  grpc::Status status;
  std::string response;
  std::multimap<std::string, std::string> initial, trailing;
};

class ShimFixture {
 public:
  ShimFixture() : runtime_(dir_.File("runtime.sock")) { ::mkdir(plugin_dir().c_str(), 0750); }
  ~ShimFixture() {
    if (shim_) shim_->Stop();
    if (host_) host_->Stop();
    shim_.reset();
    host_.reset();
  }

  std::string plugin_dir() const { return dir_.File("plugins"); }
  std::string File(const std::string& name) const { return dir_.File(name); }
  std::string cri_socket() const { return dir_.File("cri.sock"); }
  FakeRuntime& runtime() { return runtime_; }

  host::HostOptions HostOptions() const {
    host::HostOptions o;
    o.registry.plugin_dir = plugin_dir();
    o.registry.dial_timeout = std::chrono::milliseconds(3000);
    o.admission.rpc_timeout = std::chrono::milliseconds(2000);
    o.state_dir = dir_.File("state");
    o.reconcile_period = std::chrono::milliseconds(0);  // tests tick by hand
    o.worker_threads = 8;
    o.numa = *topology::NumaInfo::Create({0, 1});
    return o;
  }
  ShimOptions Options() const {
    ShimOptions o;
    o.cri_socket = cri_socket();
    o.runtime_endpoint = "unix://" + runtime_.socket_path();
    o.runtime_timeout = std::chrono::milliseconds(3000);
    o.pre_start_timeout = std::chrono::milliseconds(3000);
    o.shutdown_grace = std::chrono::milliseconds(500);
    return o;
  }

  // Host started with the shim's applier and view; the shim created but not serving.
  void StartHost(ShimOptions shim_options, host::HostOptions host_options) {
    host_ = std::make_unique<host::Host>(std::move(host_options));
    auto shim = CriShim::Create(std::move(shim_options), *host_);
    INFO(shim.status().ToString());
    REQUIRE(shim.ok());
    shim_ = std::move(*shim);
    const Status s = host_->Start(shim_->applier(), &shim_->view());
    INFO(s.ToString());
    REQUIRE(s.ok());
  }
  void StartHost() { StartHost(Options(), HostOptions()); }
  // ConnectRuntime + Resync + Serve.
  ResyncStats Open() {
    Status s = shim_->ConnectRuntime();
    INFO(s.ToString());
    REQUIRE(s.ok());
    auto stats = shim_->Resync();
    INFO(stats.status().ToString());
    REQUIRE(stats.ok());
    s = shim_->Serve();
    INFO(s.ToString());
    REQUIRE(s.ok());
    return *stats;
  }
  void StartAll(ShimOptions options) {
    StartHost(std::move(options), HostOptions());
    Open();
  }
  void StartAll() { StartAll(Options()); }

  host::Host& host() { return *host_; }
  CriShim& shim() { return *shim_; }

  // --- plugins ---------------------------------------------------------------------------
  ChildProcess& StartPlugin(const std::string& resource, std::vector<std::string> flags = {}) {
    std::vector<std::string> argv = {QRM_TEST_PLUGIN,      "--resource", resource,
                                     "--plugin-dir",       plugin_dir(), "--call-log",
                                     CallLogPath(resource)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    plugins_[resource] = std::make_unique<ChildProcess>(argv, File("plugins.log"));
    return *plugins_[resource];
  }
  // A CPU plugin answering CpusetCpus "2-3" (and env TEST_PLUGIN_NODES), registered.
  void StartCpuPlugin(std::vector<std::string> extra = {}) {
    std::vector<std::string> flags = {"--oci-property", "CpusetCpus", "--result", "2-3"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    StartPlugin("cpu", flags);
    REQUIRE(WaitRegistered("cpu"));
  }
  bool WaitRegistered(const std::string& resource) {
    return WaitFor([&] {
      auto e = host_->registry().Find(resource);
      return e != nullptr && !e->stopped();
    });
  }
  std::string CallLogPath(const std::string& resource) const {
    std::string safe = resource;
    for (char& c : safe) {
      if (c == '/') c = '_';
    }
    return dir_.File("calls-" + safe + ".log");
  }
  // Calls of `method` the plugin of `resource` logged, optionally for one pod only.
  int PluginCalls(const std::string& resource, const std::string& method,
                  const std::string& pod_uid = "") const {
    std::ifstream in(CallLogPath(resource));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(method + " ", 0) != 0) continue;
      if (!pod_uid.empty() && line.find(" " + pod_uid) == std::string::npos) continue;
      ++n;
    }
    return n;
  }

  // --- the kubelet's side ----------------------------------------------------------------
  std::shared_ptr<grpc::Channel> KubeletChannel() {
    if (!channel_) {
      grpc::ChannelArguments args;
      args.SetMaxReceiveMessageSize(kKubeletLimit);
      args.SetMaxSendMessageSize(kKubeletLimit);
      channel_ = grpc::CreateCustomChannel("unix://" + cri_socket(),
                                           grpc::InsecureChannelCredentials(), args);
    }
    return channel_;
  }
  cri::RuntimeService::Stub& Runtime() {
    if (!runtime_stub_) runtime_stub_ = cri::RuntimeService::NewStub(KubeletChannel());
    return *runtime_stub_;
  }
  static std::unique_ptr<grpc::ClientContext> Context(
      std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + timeout);
    return c;
  }

  // A unary call of any method with raw bytes, as a client with no .proto would make it.
  RawResult RawCall(
      const std::string& method, const std::string& request,
      const std::multimap<std::string, std::string>& metadata = {},
      std::optional<std::chrono::milliseconds> timeout = std::chrono::milliseconds(10000)) {
    grpc::GenericStub stub(KubeletChannel());
    grpc::ClientContext context;
    if (timeout) context.set_deadline(std::chrono::system_clock::now() + *timeout);
    for (const auto& [k, v] : metadata) context.AddMetadata(k, v);
    grpc::Slice slice(request);
    grpc::ByteBuffer in(&slice, 1), out;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &in, &out,
                   [&done](grpc::Status s) { done.set_value(std::move(s)); });
    RawResult result;
    result.status = done.get_future().get();
    std::vector<grpc::Slice> slices;
    (void)out.Dump(&slices);
    for (const auto& s : slices) {
      result.response.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    for (const auto& [k, v] : context.GetServerInitialMetadata()) {
      result.initial.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
    }
    for (const auto& [k, v] : context.GetServerTrailingMetadata()) {
      result.trailing.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
    }
    return result;
  }

  // The kubelet's calls for a pod: RunPodSandbox, then CreateContainer with its config.
  cri::PodSandboxConfig PodConfig(const std::string& uid, const std::string& name,
                                  const std::string& ns = "default",
                                  std::map<std::string, std::string> annotations = {
                                      {"katalyst.kubewharf.io/qos_level", "dedicated_cores"}}) {
    cri::PodSandboxConfig config;
    config.mutable_metadata()->set_uid(uid);
    config.mutable_metadata()->set_name(name);
    config.mutable_metadata()->set_namespace_(ns);
    (*config.mutable_labels())["io.kubernetes.pod.uid"] = uid;
    (*config.mutable_labels())["io.kubernetes.pod.name"] = name;
    (*config.mutable_labels())["io.kubernetes.pod.namespace"] = ns;
    for (const auto& [k, v] : annotations) (*config.mutable_annotations())[k] = v;
    config.mutable_linux()->set_cgroup_parent("/kubepods/pod" + uid);
    return config;
  }
  std::string RunPod(const cri::PodSandboxConfig& config) {
    cri::RunPodSandboxRequest request;
    *request.mutable_config() = config;
    cri::RunPodSandboxResponse response;
    const grpc::Status s = Runtime().RunPodSandbox(Context().get(), request, &response);
    INFO(s.error_message());
    REQUIRE(s.ok());
    return response.pod_sandbox_id();
  }
  cri::CreateContainerRequest ContainerRequest(const std::string& sandbox_id,
                                               const cri::PodSandboxConfig& pod,
                                               const std::string& name, int64_t cpu_shares = 2048) {
    cri::CreateContainerRequest request;
    request.set_pod_sandbox_id(sandbox_id);
    *request.mutable_sandbox_config() = pod;
    auto* config = request.mutable_config();
    config->mutable_metadata()->set_name(name);
    config->mutable_image()->set_image("busybox");
    (*config->mutable_labels())["io.kubernetes.container.name"] = name;
    (*config->mutable_labels())["io.kubernetes.pod.uid"] = pod.metadata().uid();
    auto* env = config->add_envs();
    env->set_key("PATH");
    env->set_value("/bin");
    auto* resources = config->mutable_linux()->mutable_resources();
    resources->set_cpu_shares(cpu_shares);
    resources->set_memory_limit_in_bytes(256ll << 20);
    return request;
  }
  grpc::Status CreateContainer(const cri::CreateContainerRequest& request, std::string* id) {
    cri::CreateContainerResponse response;
    grpc::Status s = Runtime().CreateContainer(Context().get(), request, &response);
    if (id != nullptr) *id = response.container_id();
    return s;
  }

 private:
  TempDir dir_;
  FakeRuntime runtime_;
  std::map<std::string, std::unique_ptr<ChildProcess>> plugins_;
  std::unique_ptr<host::Host> host_;
  std::unique_ptr<CriShim> shim_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<cri::RuntimeService::Stub> runtime_stub_;
};

}  // namespace qrm::shim::testing
