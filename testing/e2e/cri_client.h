// A small CRI v1 client for e2e tests: typed stubs on a unix socket (16 MiB message limits,
// as the kubelet uses) plus helpers that build kubelet-like requests. It talks to whatever
// serves CRI on the socket: containerd directly, or qrm's CRI shim in front of it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "api/cri_runtime_v1.grpc.pb.h"
#include "api/cri_runtime_v1.pb.h"
#include "common/status.h"

namespace qrm::e2e {

namespace cri = ::runtime::v1;

inline constexpr int kCriMessageLimit = 16 * 1024 * 1024;

// A pod sandbox the client started, with the config CreateContainer needs again.
struct Pod {
  std::string id;
  cri::PodSandboxConfig config;
};

struct ContainerSpec {
  std::string name;
  std::string image;                 // empty: the client's default image
  std::vector<std::string> command;  // empty: the image's (sleep 2147483647)
  std::vector<std::string> args;
  std::string cpuset_cpus;  // LinuxContainerResources, empty/0 = unset
  std::string cpuset_mems;
  int64_t cpu_shares = 0;
  int64_t cpu_period = 0;
  int64_t cpu_quota = 0;
  int64_t memory_limit_in_bytes = 0;
  std::map<std::string, std::string> labels;  // added to the kubelet's labels
  std::map<std::string, std::string> annotations;
};

struct ExecResult {
  int exit_code = -1;
  std::string stdout_text;
  std::string stderr_text;
};

// What ContainerStatus(verbose) tells about a running container.
struct ContainerRuntimeInfo {
  int64_t pid = 0;           // init pid on the host
  std::string cgroups_path;  // OCI spec linux.cgroupsPath
};

class CriClient {
 public:
  struct Options {
    std::string default_image;  // image for ContainerSpec without one
    std::string cgroup_root;    // pods get cgroup_parent "<cgroup_root>/pod<uid>" if set
    std::string log_root;       // pods get log_directory "<log_root>/<ns>_<name>_<uid>" if set
    std::chrono::milliseconds rpc_timeout{std::chrono::seconds(30)};
  };

  // `socket` is a filesystem path ("/tmp/x/containerd.sock") or a gRPC target ("unix:...").
  CriClient(const std::string& socket, Options options);

  cri::RuntimeService::Stub& runtime() { return *runtime_; }
  cri::ImageService::Stub& images() { return *images_; }
  const Options& options() const { return options_; }

  // A context with the client's RPC deadline (or `timeout`), for raw stub calls.
  std::unique_ptr<grpc::ClientContext> Context() const;
  std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds timeout) const;

  StatusOr<cri::VersionResponse> Version();
  StatusOr<std::vector<cri::Image>> ListImages();

  // The PodSandboxConfig the kubelet would send for a host-network pod: metadata, the
  // kubelet's identity labels, `annotations`, namespace_options.network = NODE, cgroup
  // parent and log directory as configured above.
  cri::PodSandboxConfig HostNetworkPodConfig(
      const std::string& name, const std::string& uid, const std::string& pod_namespace,
      const std::map<std::string, std::string>& annotations = {}) const;
  StatusOr<Pod> RunPod(const cri::PodSandboxConfig& config);
  StatusOr<Pod> RunHostNetworkPod(const std::string& name, const std::string& uid,
                                  const std::string& pod_namespace,
                                  const std::map<std::string, std::string>& annotations = {});

  // The ContainerConfig the kubelet would send (labels io.kubernetes.*, log path).
  cri::ContainerConfig ContainerConfigFor(const Pod& pod, const ContainerSpec& spec) const;
  StatusOr<std::string> CreateContainer(const Pod& pod, const ContainerSpec& spec);
  Status StartContainer(const std::string& container_id);
  StatusOr<std::string> CreateAndStartContainer(const Pod& pod, const ContainerSpec& spec);

  StatusOr<cri::ContainerStatusResponse> ContainerStatus(const std::string& container_id,
                                                         bool verbose = false);
  StatusOr<ContainerRuntimeInfo> ContainerInfo(const std::string& container_id);
  Status UpdateContainerResources(const std::string& container_id,
                                  const cri::LinuxContainerResources& resources);
  Status UpdateContainerCpuset(const std::string& container_id, const std::string& cpus);

  // Runs `cmd` in the container and returns its result (any exit code).
  StatusOr<ExecResult> Exec(const std::string& container_id, const std::vector<std::string>& cmd,
                            std::chrono::seconds timeout = std::chrono::seconds(10));
  // Runs `cmd` and returns its stdout; an error if it exits non-zero.
  StatusOr<std::string> ExecSync(const std::string& container_id,
                                 const std::vector<std::string>& cmd);

  // cpuset.cpus of the container's cgroup, read on the host (cgroup v1 hierarchy found via
  // /proc/<init pid>/cgroup), trimmed, e.g. "0-1".
  // The container's cpu.cfs_quota_us (-1: no limit) from its cgroup v1 cpu hierarchy, found
  // through its init process like ContainerCgroupCpus.
  StatusOr<int64_t> ContainerCgroupCpuQuota(const std::string& container_id);
  StatusOr<std::string> ContainerCgroupCpus(const std::string& container_id);

  // Stops (timeout 0: SIGKILL) and removes.
  Status StopAndRemoveContainer(const std::string& container_id);
  Status StopAndRemovePod(const std::string& pod_sandbox_id);
  // Every container, then every pod sandbox, the runtime lists. Returns the first error.
  Status RemoveEverything();

 private:
  // `name` in the container's cgroup v1 `controller` hierarchy (found through its init process),
  // trimmed.
  StatusOr<std::string> ContainerCgroupFile(const std::string& container_id,
                                            const std::string& controller, const std::string& name);
  Options options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<cri::RuntimeService::Stub> runtime_;
  std::unique_ptr<cri::ImageService::Stub> images_;
};

// "Cpus_allowed_list" from the text of a /proc/PID/status file, or empty.
std::string CpusAllowedList(const std::string& proc_status);

}  // namespace qrm::e2e
