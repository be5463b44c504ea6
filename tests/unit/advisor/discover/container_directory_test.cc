// ContainerDirectory against an in-process fake CRI runtime: identity from sandboxes (and the
// kubelet's labels), cgroup and requests from the verbose info, one ContainerStatus per
// container, the cache dropping gone containers, a broken container skipped and counted while
// the others are listed, a runtime that cannot be listed or reached failing the refresh, and
// a slow runtime costing one timeout per refresh.
#include "advisor/discover/container_directory.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "api/cri_runtime_v1.grpc.pb.h"
#include "testing/temp_dir.h"

namespace qrm::advisor {
namespace {

namespace cri = ::runtime::v1;

std::string InfoJson(int64_t pid, const std::string& cgroups_path, uint64_t shares,
                     int64_t quota = 0, int64_t memory = 0) {
  return fmt::format(
      R"({{"sandboxID":"s","pid":{},"runtimeSpec":{{"linux":{{"cgroupsPath":"{}",)"
      R"("resources":{{"cpu":{{"shares":{},"quota":{},"period":100000}},"memory":{{"limit":{}}}}}}}}}}})",
      pid, cgroups_path, shares, quota, memory);
}

class FakeRuntime final : public cri::RuntimeService::Service {
 public:
  void AddPod(const std::string& id, const std::string& uid, const std::string& name,
              const std::string& ns) {
    std::lock_guard lock(mu_);
    cri::PodSandbox& pod = pods_[id];
    pod.set_id(id);
    pod.mutable_metadata()->set_uid(uid);
    pod.mutable_metadata()->set_name(name);
    pod.mutable_metadata()->set_namespace_(ns);
  }
  void AddContainer(const std::string& id, const std::string& pod_id, const std::string& name,
                    std::string info, cri::ContainerState state = cri::CONTAINER_RUNNING) {
    std::lock_guard lock(mu_);
    cri::Container& c = containers_[id];
    c.set_id(id);
    c.set_pod_sandbox_id(pod_id);
    c.mutable_metadata()->set_name(name);
    c.set_state(state);
    info_[id] = std::move(info);
  }
  void SetLabel(const std::string& id, const std::string& key, const std::string& value) {
    std::lock_guard lock(mu_);
    (*containers_[id].mutable_labels())[key] = value;
  }
  void RemoveContainer(const std::string& id) {
    std::lock_guard lock(mu_);
    containers_.erase(id);
  }
  void FailList(grpc::Status status) {
    std::lock_guard lock(mu_);
    list_error_ = std::move(status);
  }
  void FailStatus(const std::string& id, grpc::Status status) {
    std::lock_guard lock(mu_);
    if (status.ok()) {
      status_errors_.erase(id);
    } else {
      status_errors_[id] = std::move(status);
    }
  }
  void SlowStatus(const std::string& id, std::chrono::milliseconds delay) {
    std::lock_guard lock(mu_);
    delays_[id] = delay;
  }
  int StatusCalls(const std::string& id) {
    std::lock_guard lock(mu_);
    return status_calls_[id];
  }

  grpc::Status ListPodSandbox(grpc::ServerContext*, const cri::ListPodSandboxRequest*,
                              cri::ListPodSandboxResponse* response) override {
    std::lock_guard lock(mu_);
    for (const auto& [id, pod] : pods_) *response->add_items() = pod;
    return grpc::Status::OK;
  }

  grpc::Status ListContainers(grpc::ServerContext*, const cri::ListContainersRequest* request,
                              cri::ListContainersResponse* response) override {
    std::lock_guard lock(mu_);
    if (!list_error_.ok()) return list_error_;
    for (const auto& [id, c] : containers_) {
      if (!request->filter().has_state() || request->filter().state().state() == c.state()) {
        *response->add_containers() = c;
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status ContainerStatus(grpc::ServerContext*, const cri::ContainerStatusRequest* request,
                               cri::ContainerStatusResponse* response) override {
    std::chrono::milliseconds delay{0};
    {
      std::lock_guard lock(mu_);
      const std::string& id = request->container_id();
      ++status_calls_[id];
      if (const auto e = status_errors_.find(id); e != status_errors_.end()) return e->second;
      if (!info_.count(id)) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no " + id);
      response->mutable_status()->set_id(id);
      if (request->verbose()) (*response->mutable_info())["info"] = info_[id];
      if (const auto d = delays_.find(id); d != delays_.end()) delay = d->second;
    }
    std::this_thread::sleep_for(delay);
    return grpc::Status::OK;
  }

 private:
  std::mutex mu_;
  std::map<std::string, cri::PodSandbox> pods_;
  std::map<std::string, cri::Container> containers_;
  std::map<std::string, std::string> info_;
  std::map<std::string, grpc::Status> status_errors_;
  std::map<std::string, std::chrono::milliseconds> delays_;
  std::map<std::string, int> status_calls_;
  grpc::Status list_error_;
};

// A fake runtime served in process, with a directory on it.
struct Fixture {
  explicit Fixture(ContainerDirectoryOptions options = {}) {
    grpc::ServerBuilder builder;
    builder.RegisterService(&runtime);
    server = builder.BuildAndStart();
    directory = std::make_unique<ContainerDirectory>(
        server->InProcessChannel(grpc::ChannelArguments()), std::move(options));
  }
  ~Fixture() { server->Shutdown(); }

  std::vector<ContainerEntry> Refresh() {
    StatusOr<std::vector<ContainerEntry>> list = directory->Refresh();
    INFO(list.status().ToString());
    REQUIRE(list.ok());
    return *list;
  }

  FakeRuntime runtime;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<ContainerDirectory> directory;
};

std::vector<std::string> Ids(const std::vector<ContainerEntry>& entries) {
  std::vector<std::string> ids;
  for (const auto& e : entries) ids.push_back(e.container_id);
  return ids;
}

TEST_CASE("cpu request back from shares, as the kubelet reads it", "[advisor][discover]") {
  CHECK(CpuRequestCores(0) == 0);
  CHECK(CpuRequestCores(2) == 0);  // the floor: no request (or under 2 milli-cores)
  CHECK(CpuRequestCores(1024) == 1.0);
  CHECK(CpuRequestCores(512) == 0.5);
  CHECK(CpuRequestCores(102) == 0.1);  // 100m: 102 shares
  // Every request from 3 milli-cores up comes back exactly.
  for (int64_t milli = 3; milli <= 64000; ++milli) {
    const auto shares = static_cast<uint64_t>(milli * 1024 / 1000);
    if (shares <= 2) continue;
    INFO(milli);
    REQUIRE(std::llround(CpuRequestCores(shares) * 1000) == milli);
  }
  CHECK(CpuLimitCores(150000, 100000) == 1.5);
  CHECK(CpuLimitCores(-1, 100000) == 0);
  CHECK(CpuLimitCores(0, 100000) == 0);
  CHECK(CpuLimitCores(50000, 0) == 0);
}

TEST_CASE("running containers with their pod, cgroup, requests and limits", "[advisor][discover]") {
  Fixture f;
  f.runtime.AddPod("sb1", "uid-1", "web-0", "shop");
  f.runtime.AddPod("sb2", "uid-2", "db-0", "shop");
  f.runtime.AddContainer("c1", "sb1", "app",
                         InfoJson(101, "/kubepods/pod-uid-1/c1", 512, 100000, 268435456));
  f.runtime.AddContainer("c2", "sb2", "db",
                         InfoJson(102, "kubepods-besteffort-poduid_2.slice:cri-containerd:c2", 2));
  f.runtime.AddContainer("c3", "sb1", "sidecar", InfoJson(103, "/kubepods/pod-uid-1/c3", 102));
  f.runtime.AddContainer("c4", "sb1", "init", InfoJson(0, "/kubepods/pod-uid-1/c4", 2),
                         cri::CONTAINER_EXITED);
  const std::vector<ContainerEntry> list = f.Refresh();
  REQUIRE(Ids(list) == std::vector<std::string>{"c1", "c3", "c2"});  // by pod uid, then name
  const ContainerEntry& app = list[0];
  CHECK(app.pod_uid == "uid-1");
  CHECK(app.pod_name == "web-0");
  CHECK(app.pod_namespace == "shop");
  CHECK(app.container_name == "app");
  CHECK(app.cgroup_path == "/kubepods/pod-uid-1/c1");
  CHECK(app.cpu_request_cores == 0.5);
  CHECK(app.cpu_limit_cores == 1.0);
  CHECK(app.memory_limit_bytes == 268435456);
  CHECK(app.pid == 101);
  CHECK(list[1].cpu_request_cores == 0.1);
  CHECK(list[2].cgroup_path ==
        "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-poduid_2.slice/"
        "cri-containerd-c2.scope");
  CHECK(list[2].cpu_request_cores == 0);
  CHECK(list[2].cpu_limit_cores == 0);
  CHECK(f.runtime.StatusCalls("c4") == 0);  // not running: never asked
}

TEST_CASE("ContainerStatus once per container, and gone containers are dropped",
          "[advisor][discover]") {
  Fixture f;
  f.runtime.AddPod("sb1", "uid-1", "web-0", "shop");
  f.runtime.AddContainer("c1", "sb1", "app", InfoJson(101, "/k/c1", 512));
  f.runtime.AddContainer("c2", "sb1", "side", InfoJson(102, "/k/c2", 512));
  CHECK(f.Refresh().size() == 2);
  CHECK(f.Refresh().size() == 2);
  CHECK(f.runtime.StatusCalls("c1") == 1);
  CHECK(f.runtime.StatusCalls("c2") == 1);
  CHECK(f.directory->cached() == 2);
  f.runtime.RemoveContainer("c2");
  CHECK(Ids(f.Refresh()) == std::vector<std::string>{"c1"});
  CHECK(f.directory->cached() == 1);
  CHECK(f.runtime.StatusCalls("c1") == 1);
}

TEST_CASE("a container that cannot be described is left out and counted, not the list",
          "[advisor][discover]") {
  Fixture f;
  f.runtime.AddPod("sb1", "uid-1", "web-0", "shop");
  f.runtime.AddContainer("c1", "sb1", "app", InfoJson(101, "/k/c1", 512));
  f.runtime.AddContainer("bad-json", "sb1", "b1", "{\"pid\":");
  f.runtime.AddContainer("bad-type", "sb1", "b2", R"({"pid":"x"})");
  f.runtime.AddContainer("bad-path", "sb1", "b3", InfoJson(0, "/k/../etc", 512));
  f.runtime.AddContainer("failing", "sb1", "b4", InfoJson(104, "/k/c4", 512));
  f.runtime.FailStatus("failing", grpc::Status(grpc::StatusCode::INTERNAL, "boom"));
  CHECK(Ids(f.Refresh()) == std::vector<std::string>{"c1"});
  CHECK(f.directory->skipped_total() == 4);
  CHECK(f.directory->cached() == 1);
  // Asked again at the next refresh: a fixed container joins the list.
  f.runtime.FailStatus("failing", grpc::Status::OK);
  CHECK(Ids(f.Refresh()) == std::vector<std::string>{"c1", "failing"});
  CHECK(f.directory->skipped_total() == 7);
  CHECK(f.runtime.StatusCalls("bad-json") == 2);
}

TEST_CASE("a container removed before its status call is left out quietly", "[advisor][discover]") {
  Fixture f;
  f.runtime.AddPod("sb1", "uid-1", "web-0", "shop");
  f.runtime.AddContainer("c1", "sb1", "app", InfoJson(101, "/k/c1", 512));
  f.runtime.AddContainer("c2", "sb1", "side", InfoJson(102, "/k/c2", 512));
  f.runtime.FailStatus("c2", grpc::Status(grpc::StatusCode::NOT_FOUND, "container not found"));
  CHECK(Ids(f.Refresh()) == std::vector<std::string>{"c1"});
  CHECK(f.directory->skipped_total() == 0);
}

TEST_CASE("identity from the kubelet's labels when the sandbox is not listed",
          "[advisor][discover]") {
  Fixture f;
  f.runtime.AddContainer("c1", "gone-sandbox", "app", InfoJson(101, "/k/c1", 512));
  f.runtime.SetLabel("c1", "io.kubernetes.pod.uid", "uid-9");
  f.runtime.SetLabel("c1", "io.kubernetes.pod.name", "job-9");
  f.runtime.SetLabel("c1", "io.kubernetes.pod.namespace", "batch");
  const std::vector<ContainerEntry> list = f.Refresh();
  REQUIRE(list.size() == 1);
  CHECK(list[0].pod_uid == "uid-9");
  CHECK(list[0].pod_name == "job-9");
  CHECK(list[0].pod_namespace == "batch");
  CHECK(list[0].container_name == "app");
}

TEST_CASE("a cgroupsPath that is refused falls back to /proc/<pid>/cgroup", "[advisor][discover]") {
  qrm::testing::TempDir procfs;
  std::filesystem::create_directories(procfs.File("4242"));
  std::ofstream(procfs.File("4242/cgroup"))
      << "4:memory:/k8s.io/c1\n2:cpuacct:/k8s.io/c1\n0::/system.slice/containerd.service\n";
  ContainerDirectoryOptions options;
  options.procfs_root = procfs.path();
  Fixture f(options);
  f.runtime.AddPod("sb1", "uid-1", "web-0", "shop");
  f.runtime.AddContainer("c1", "sb1", "app", InfoJson(4242, "k8s.io/c1", 512));
  // No process to ask: left out, naming both reasons.
  f.runtime.AddContainer("c2", "sb1", "side", InfoJson(4343, "k8s.io/c2", 512));
  const std::vector<ContainerEntry> list = f.Refresh();
  REQUIRE(Ids(list) == std::vector<std::string>{"c1"});
  CHECK(list[0].cgroup_path == "/k8s.io/c1");
  CHECK(f.directory->skipped_total() == 0);  // c2's process is gone: kNotFound, quiet
}

TEST_CASE("a runtime that cannot be listed or reached fails the refresh", "[advisor][discover]") {
  {
    Fixture f;
    f.runtime.AddPod("sb1", "uid-1", "web-0", "shop");
    f.runtime.AddContainer("c1", "sb1", "app", InfoJson(101, "/k/c1", 512));
    CHECK(f.Refresh().size() == 1);
    f.runtime.FailList(grpc::Status(grpc::StatusCode::INTERNAL, "store broken"));
    const auto failed = f.directory->Refresh();
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.status().code() == StatusCode::kInternal);
    CHECK_THAT(failed.status().message(),
               Catch::Contains("runtime ListContainers") && Catch::Contains("store broken"));
    CHECK(f.directory->cached() == 1);  // kept for when the runtime answers again
  }
  ContainerDirectoryOptions options;
  options.rpc_timeout = std::chrono::milliseconds(500);
  qrm::testing::TempDir dir;
  ContainerDirectory nowhere(RuntimeChannel(dir.File("no-such.sock")), options);
  const auto unreachable = nowhere.Refresh();
  REQUIRE_FALSE(unreachable.ok());
  CHECK(unreachable.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(unreachable.status().message(), Catch::Contains("runtime ListContainers"));
}

TEST_CASE("a ContainerStatus that times out leaves the rest for the next refresh",
          "[advisor][discover]") {
  ContainerDirectoryOptions options;
  options.rpc_timeout = std::chrono::milliseconds(200);
  Fixture f(options);
  f.runtime.AddPod("sb1", "uid-1", "web-0", "shop");
  for (const char* id : {"c1", "c2", "c3"}) {
    f.runtime.AddContainer(id, "sb1", id, InfoJson(101, std::string("/k/") + id, 512));
  }
  f.runtime.SlowStatus("c1", std::chrono::milliseconds(1000));
  const auto start = std::chrono::steady_clock::now();
  CHECK(f.Refresh().empty());  // c1 timed out; c2 and c3 not asked
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(900));
  CHECK(f.directory->skipped_total() == 1);
  CHECK(f.runtime.StatusCalls("c2") == 0);
  f.runtime.SlowStatus("c1", std::chrono::milliseconds(0));
  CHECK(f.Refresh().size() == 3);
}

}  // namespace
}  // namespace qrm::advisor
