// The CRI shim in front of a real containerd: what passes through is what containerd says,
// and what qrm decides reaches runc's cgroups.
#include <algorithm>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/generic/generic_stub.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cri-shim/cri_shim.h"
#include "qrm/host/host.h"
#include "testing/child_process.h"
#include "testing/e2e/containerd.h"
#include "testing/e2e/cri_client.h"
#include "testing/e2e/host.h"
#include "testing/temp_dir.h"

namespace {

namespace cri = qrm::e2e::cri;
using google::protobuf::util::MessageDifferencer;
using qrm::e2e::Containerd;
using qrm::e2e::ContainerSpec;
using qrm::e2e::CriClient;

std::string Describe(const qrm::Status& s) {
  return s.ToString();
}
template <typename T>
std::string Describe(const qrm::StatusOr<T>& s) {
  return s.status().ToString();
}

#define REQUIRE_OK(expr)     \
  do {                       \
    const auto& r_ = (expr); \
    INFO(Describe(r_));      \
    REQUIRE(r_.ok());        \
  } while (0)

bool E2eEnvironment() {
  if (::geteuid() != 0) {
    WARN("not root: e2e test skipped");
    return false;
  }
  return true;
}

// Equal as messages (map entries in any order), with the difference printed if not.
void CheckSame(const google::protobuf::Message& direct, const google::protobuf::Message& shim) {
  std::string diff;
  MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  INFO(diff);
  CHECK(differencer.Compare(direct, shim));
}

// containerd, a qrm Host with one CPU plugin, and the shim serving CRI in front.
class ShimOnContainerd {
 public:
  // `plugin_flags` go to a qrm-test-plugin for "cpu" (none: no plugin).
  void Start(std::vector<std::string> plugin_flags = {}) {
    auto c = Containerd::Start();
    REQUIRE_OK(c);
    containerd_ = std::move(*c);
    ::mkdir(dir_.File("plugins").c_str(), 0750);
    qrm::host::HostOptions host_options;
    host_options.registry.plugin_dir = dir_.File("plugins");
    host_options.state_dir = dir_.File("state");
    host_options.reconcile_period = std::chrono::milliseconds(0);  // ticked by the tests
    host_options.worker_threads = 4;
    host_options.numa = *qrm::topology::NumaInfo::Create({0});
    host_ = std::make_unique<qrm::host::Host>(host_options);
    qrm::shim::ShimOptions options;
    options.cri_socket = dir_.File("cri.sock");
    options.runtime_endpoint = containerd_->socket();
    options.runtime_timeout = std::chrono::seconds(30);
    auto shim = qrm::shim::CriShim::Create(options, *host_);
    REQUIRE_OK(shim);
    shim_ = std::move(*shim);
    REQUIRE_OK(host_->Start(shim_->applier(), &shim_->view()));
    if (!plugin_flags.empty()) {
      std::vector<std::string> argv = {QRM_TEST_PLUGIN, "--resource", "cpu", "--plugin-dir",
                                       dir_.File("plugins")};
      argv.insert(argv.end(), plugin_flags.begin(), plugin_flags.end());
      plugin_ = std::make_unique<qrm::testing::ChildProcess>(argv, dir_.File("plugin.log"));
      REQUIRE(qrm::testing::WaitFor([&] {
        auto e = host_->registry().Find("cpu");
        return e != nullptr && !e->stopped();
      }));
    }
    REQUIRE_OK(shim_->ConnectRuntime());
    REQUIRE_OK(shim_->Resync());
    REQUIRE_OK(shim_->Serve());
  }

  ~ShimOnContainerd() {
    if (shim_) shim_->Stop();
    if (host_) host_->Stop();
    shim_.reset();
    host_.reset();
    plugin_.reset();
    if (containerd_) CHECK(containerd_->Stop().empty());
  }

  Containerd& containerd() { return *containerd_; }
  CriClient Direct() { return containerd_->Client(); }
  CriClient ThroughShim() { return CriClient(shim_->socket_path(), containerd_->ClientOptions()); }
  qrm::host::Host& host() { return *host_; }
  qrm::shim::CriShim& shim() { return *shim_; }
  std::string File(const std::string& name) const { return dir_.File(name); }

 private:
  qrm::testing::TempDir dir_;
  std::unique_ptr<Containerd> containerd_;
  std::unique_ptr<qrm::host::Host> host_;
  std::unique_ptr<qrm::shim::CriShim> shim_;
  std::unique_ptr<qrm::testing::ChildProcess> plugin_;
};

// A call of a method nobody declares, with an empty message.
grpc::Status RawCall(const std::string& socket, const std::string& method) {
  auto channel = grpc::CreateChannel("unix://" + socket, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice empty("");
  grpc::ByteBuffer in(&empty, 1), out;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &in, &out,
                 [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

TEST_CASE("Pass-through answers are containerd's own", "[cri_shim][e2e]") {
  if (!E2eEnvironment()) return;
  ShimOnContainerd env;
  env.Start();
  CriClient direct = env.Direct();
  CriClient shim = env.ThroughShim();

  // A running container, made directly (qrm has nothing to do with it).
  auto pod = direct.RunHostNetworkPod("passthrough", "uid-passthrough", "default");
  REQUIRE_OK(pod);
  ContainerSpec spec;
  spec.name = "app";
  auto id = direct.CreateAndStartContainer(*pod, spec);
  REQUIRE_OK(id);

  {
    auto a = direct.Version(), b = shim.Version();
    REQUIRE_OK(a);
    REQUIRE_OK(b);
    CheckSame(*a, *b);
  }
  {
    cri::ListImagesResponse a, b;
    REQUIRE(direct.images().ListImages(direct.Context().get(), {}, &a).ok());
    REQUIRE(shim.images().ListImages(shim.Context().get(), {}, &b).ok());
    REQUIRE(a.images_size() > 0);
    CheckSame(a, b);
  }
  {
    cri::ImageStatusRequest request;
    request.mutable_image()->set_image(env.containerd().image());
    request.set_verbose(true);
    cri::ImageStatusResponse a, b;
    REQUIRE(direct.images().ImageStatus(direct.Context().get(), request, &a).ok());
    REQUIRE(shim.images().ImageStatus(shim.Context().get(), request, &b).ok());
    REQUIRE(a.image().id().rfind("sha256:", 0) == 0);
    CheckSame(a, b);
  }
  {
    // Verbose: the info map carries containerd's JSON (pid, runtime spec, ...), unchanged.
    cri::PodSandboxStatusRequest request;
    request.set_pod_sandbox_id(pod->id);
    request.set_verbose(true);
    cri::PodSandboxStatusResponse a, b;
    REQUIRE(direct.runtime().PodSandboxStatus(direct.Context().get(), request, &a).ok());
    REQUIRE(shim.runtime().PodSandboxStatus(shim.Context().get(), request, &b).ok());
    REQUIRE_FALSE(a.info().empty());
    CheckSame(a, b);
  }
  {
    auto a = direct.ContainerStatus(*id, true), b = shim.ContainerStatus(*id, true);
    REQUIRE_OK(a);
    REQUIRE_OK(b);
    CHECK(a->status().state() == cri::CONTAINER_RUNNING);
    CheckSame(*a, *b);
  }
  {
    auto a = direct.Exec(*id, {"sh", "-c", "echo out; echo err >&2; exit 3"});
    auto b = shim.Exec(*id, {"sh", "-c", "echo out; echo err >&2; exit 3"});
    REQUIRE_OK(a);
    REQUIRE_OK(b);
    CHECK(a->exit_code == 3);
    CHECK(b->exit_code == a->exit_code);
    CHECK(b->stdout_text == a->stdout_text);
    CHECK(b->stderr_text == a->stderr_text);
  }
  {
    cri::ContainerStatsRequest request;
    request.set_container_id(*id);
    cri::ContainerStatsResponse a, b;
    REQUIRE(direct.runtime().ContainerStats(direct.Context().get(), request, &a).ok());
    REQUIRE(shim.runtime().ContainerStats(shim.Context().get(), request, &b).ok());
    // Usage is sampled when each call arrives: cpu and memory counters and their
    // timestamps, and the writable layer's byte count and timestamp, may move between the
    // two calls. Everything else (the container's identity, labels, annotations) must not,
    // and each usage part must be present in both.
    for (auto* stats : {a.mutable_stats(), b.mutable_stats()}) {
      CHECK(stats->has_cpu());
      CHECK(stats->has_memory());
      stats->clear_cpu();
      stats->clear_memory();
      stats->clear_writable_layer();
      stats->clear_swap();
      stats->clear_io();
    }
    CHECK(a.stats().attributes().id() == *id);
    CheckSame(a, b);
  }
  {
    const grpc::Status a = RawCall(env.containerd().socket(), "/runtime.v1.RuntimeService/MadeUp");
    const grpc::Status b = RawCall(env.shim().socket_path(), "/runtime.v1.RuntimeService/MadeUp");
    CHECK(a.error_code() == grpc::StatusCode::UNIMPLEMENTED);
    CHECK(b.error_code() == a.error_code());
    CHECK(b.error_message() == a.error_message());
  }
  CHECK(env.shim().counters().intercepted_calls == 0);
  CHECK(env.shim().counters().passthrough_calls == 8);  // the eight calls above
}

TEST_CASE("A ListContainers response over 4 MiB passes through", "[cri_shim][e2e]") {
  if (!E2eEnvironment()) return;
  ShimOnContainerd env;
  env.Start();
  CriClient direct = env.Direct();
  auto pod = direct.RunHostNetworkPod("big", "uid-big", "default");
  REQUIRE_OK(pod);
  // Five containers with 1 MiB of annotations each (16 x 64 KiB).
  for (int i = 0; i < 5; ++i) {
    ContainerSpec spec;
    spec.name = "c" + std::to_string(i);
    for (int k = 0; k < 16; ++k) {
      spec.annotations["qrm.test/pad-" + std::to_string(k)] = std::string(64 << 10, 'a' + i);
    }
    REQUIRE_OK(direct.CreateContainer(*pod, spec));
  }
  cri::ListContainersResponse a, b;
  REQUIRE(direct.runtime().ListContainers(direct.Context().get(), {}, &a).ok());
  CriClient shim = env.ThroughShim();
  const grpc::Status s = shim.runtime().ListContainers(shim.Context().get(), {}, &b);
  INFO(s.error_message());
  REQUIRE(s.ok());
  CHECK(b.ByteSizeLong() > (4u << 20));
  CHECK(b.containers_size() == 5);
  // The runtime lists in no particular order: compare by id.
  for (auto* list : {&a, &b}) {
    std::sort(list->mutable_containers()->begin(), list->mutable_containers()->end(),
              [](const cri::Container& x, const cri::Container& y) { return x.id() < y.id(); });
  }
  CheckSame(a, b);
}

TEST_CASE(
    "A container created through the shim runs on the plugin's CPUs, and reconcile "
    "updates reach its cgroup",
    "[cri_shim][e2e]") {
  if (!E2eEnvironment()) return;
  if (qrm::e2e::UsableCpus() < 2) {
    WARN("needs 2 CPUs: skipped");
    return;
  }
  ShimOnContainerd env;
  qrm::testing::TempDir scratch;
  const std::string result_path = scratch.File("cpu-result");
  env.Start({"--oci-property", "CpusetCpus", "--result", "1", "--hints", "{0}:p",
             "--need-reconcile", "--result-file", result_path});
  CriClient shim = env.ThroughShim();
  auto pod = shim.RunHostNetworkPod("pinned", "uid-pinned", "default",
                                    {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"}});
  REQUIRE_OK(pod);
  ContainerSpec spec;
  spec.name = "app";
  spec.cpu_shares = 1024;
  auto id = shim.CreateAndStartContainer(*pod, spec);
  REQUIRE_OK(id);

  auto cgroup = shim.ContainerCgroupCpus(*id);
  REQUIRE_OK(cgroup);
  CHECK(*cgroup == "1");
  auto status = shim.ExecSync(*id, {"cat", "/proc/self/status"});
  REQUIRE_OK(status);
  CHECK(qrm::e2e::CpusAllowedList(*status) == "1");
  auto env_vars = shim.ExecSync(*id, {"env"});
  REQUIRE_OK(env_vars);
  CHECK(env_vars->find("TEST_PLUGIN_NODES=0") != std::string::npos);
  auto stored = env.host().state().GetContainer("uid-pinned", "app");
  REQUIRE(stored);
  CHECK(stored->request.resource_requests().at("cpu") == 1.0);

  // The plugin moves the container; the reconcile loop pushes it through the shim.
  std::ofstream(result_path) << "0\n";
  auto tick = env.host().reconciler().RunOnce();
  REQUIRE_OK(tick);
  CHECK(tick->containers_applied == 1);
  cgroup = shim.ContainerCgroupCpus(*id);
  REQUIRE_OK(cgroup);
  CHECK(*cgroup == "0");
  status = shim.ExecSync(*id, {"cat", "/proc/self/status"});
  REQUIRE_OK(status);
  CHECK(qrm::e2e::CpusAllowedList(*status) == "0");
  CHECK(env.shim().counters().applier_updates == 1);
  CHECK(env.shim().counters().applier_failures == 0);

  // Removal through the shim releases the pod.
  REQUIRE_OK(shim.StopAndRemoveContainer(*id));
  CHECK_FALSE(env.host().state().GetContainer("uid-pinned", "app"));
  REQUIRE_OK(shim.StopAndRemovePod(pod->id));
  CHECK_FALSE(env.host().state().GetPod("uid-pinned"));
}

}  // namespace

namespace {

// CreateContainer through the shim with the raw bytes given: what a client with its own
// (newer or broken) encoder would send.
grpc::Status RawCreate(const std::string& socket, const std::string& bytes) {
  auto channel = grpc::CreateChannel("unix://" + socket, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer in(&slice, 1), out;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/runtime.v1.RuntimeService/CreateContainer", grpc::StubOptions(), &in,
                 &out, [&done](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

size_t ContainersOf(CriClient& client, const std::string& sandbox_id) {
  cri::ListContainersRequest request;
  request.mutable_filter()->set_pod_sandbox_id(sandbox_id);
  cri::ListContainersResponse response;
  const grpc::Status s =
      client.runtime().ListContainers(client.Context().get(), request, &response);
  INFO(s.error_message());
  REQUIRE(s.ok());
  return static_cast<size_t>(response.containers_size());
}

}  // namespace

TEST_CASE("A binary env value is admitted; an undecodable CreateContainer never reaches containerd",
          "[cri_shim][e2e][refusal]") {
  if (!E2eEnvironment()) return;
  if (qrm::e2e::UsableCpus() < 2) {
    WARN("needs 2 CPUs: skipped");
    return;
  }
  ShimOnContainerd env;
  env.Start({"--oci-property", "CpusetCpus", "--result", "1", "--hints", "{0}:p"});
  CriClient shim = env.ThroughShim();
  CriClient direct = env.Direct();
  auto pod = shim.RunHostNetworkPod("bin", "uid-bin", "default",
                                    {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"}});
  REQUIRE_OK(pod);
  ContainerSpec spec;
  spec.name = "app";
  spec.cpu_shares = 1024;

  SECTION("env values are bytes: a value that is not UTF-8 decodes and is admitted") {
    cri::CreateContainerRequest request;
    request.set_pod_sandbox_id(pod->id);
    *request.mutable_config() = shim.ContainerConfigFor(*pod, spec);
    *request.mutable_sandbox_config() = pod->config;
    auto* blob = request.mutable_config()->add_envs();
    blob->set_key("BLOB");
    blob->set_value(std::string("a\xff\xfe", 3));
    cri::CreateContainerResponse created;
    const grpc::Status s = shim.runtime().CreateContainer(shim.Context().get(), request, &created);
    INFO(s.error_message());
    REQUIRE(s.ok());
    REQUIRE_OK(shim.StartContainer(created.container_id()));
    auto cgroup = shim.ContainerCgroupCpus(created.container_id());
    REQUIRE_OK(cgroup);
    CHECK(*cgroup == "1");  // qrm's cpuset: the request was admitted, not forwarded untouched
    CHECK(env.host().state().GetContainer("uid-bin", "app") != nullptr);
    auto vars = shim.ExecSync(created.container_id(), {"env"});
    REQUIRE_OK(vars);
    CHECK(vars->find("BLOB=a") != std::string::npos);
    REQUIRE_OK(shim.StopAndRemoveContainer(created.container_id()));
  }
  SECTION("a request qrm cannot decode is refused, though containerd would take it") {
    cri::CreateContainerRequest request;
    request.set_pod_sandbox_id(pod->id);
    *request.mutable_config() = shim.ContainerConfigFor(*pod, spec);
    *request.mutable_sandbox_config() = pod->config;
    request.mutable_config()->set_working_dir("/QQ");
    std::string bytes = request.SerializeAsString();
    const size_t at = bytes.find("/QQ");
    REQUIRE(at != std::string::npos);
    bytes[at + 1] = '\xff';  // a string field that is not UTF-8: qrm's parser rejects it
    bytes[at + 2] = '\xfe';
    grpc::Status s = RawCreate(env.shim().socket_path(), bytes);
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(s.error_message(), Catch::Matchers::Contains("CreateContainer") &&
                                      Catch::Matchers::Contains("config.working_dir"));
    // Garbage fails the same way.
    s = RawCreate(env.shim().socket_path(), std::string("\x0a\x03\xff\xfe\xfd\x12\x7f", 7));
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(ContainersOf(direct, pod->id) == 0);
    CHECK(env.host().state().GetContainer("uid-bin", "app") == nullptr);
  }
  REQUIRE_OK(shim.StopAndRemovePod(pod->id));
}
