// ContainerDirectory: the running containers of the node as the CRI runtime (containerd,
// CRI-O) knows them, each with its pod's identity, its cgroup directory and what the kubelet
// asked for (docs/advisor.md, "Finding containers").
//
// A refresh lists pod sandboxes and running containers, and asks ContainerStatus(verbose)
// once per container: its cgroup never changes, so the answer is kept until the container
// stops being listed. The cgroup comes from the OCI cgroupsPath (cgroup_path.h); when that is
// refused, from the container's process (/proc/<pid>/cgroup under `procfs_root`).
//
// Errors: a runtime that cannot be reached, or a listing that fails, fails the whole refresh
// (the caller keeps its previous list). One container that cannot be described (its info is
// malformed, its status call fails) is left out of this refresh with a rate-limited warning
// naming it, and counted; it is asked again at the next refresh. After one ContainerStatus
// timed out, the containers not yet known wait for the next refresh: a stuck runtime costs one
// timeout per refresh, not one per container. Not thread-safe: one caller refreshes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <grpcpp/channel.h>

#include "advisor/discover/runtime_info.h"
#include "common/status.h"

namespace qrm {
class RateLimitedLog;
}  // namespace qrm

namespace qrm::advisor {

struct ContainerEntry {
  // From the pod's sandbox, else the kubelet's labels on the container; empty when neither
  // tells (a container not made by the kubelet).
  std::string pod_uid;
  std::string pod_name;
  std::string pod_namespace;
  std::string container_name;
  std::string container_id;
  std::string cgroup_path;       // below a hierarchy's root: "/kubepods/burstable/pod<uid>/<id>"
  double cpu_request_cores = 0;  // from cpu shares, as the kubelet reads them back; 0: none
  double cpu_limit_cores = 0;    // quota / period; 0: no limit
  // The quota and period as the runtime first described the container (kept while it runs:
  // what a CPU throttle restores); 0 when absent.
  int64_t cpu_quota_us = 0;
  int64_t cpu_period_us = 0;
  int64_t created_unix = 0;  // the pod sandbox's creation (else the container's), Unix seconds
  int64_t memory_limit_bytes = 0;  // 0: no limit
  int64_t pid = 0;                 // the container's init process on the host
};

struct ContainerDirectoryOptions {
  std::chrono::milliseconds rpc_timeout{std::chrono::seconds(2)};  // per call
  std::string procfs_root = "/proc";
  // The hierarchy whose path /proc/<pid>/cgroup gives when cgroupsPath is refused; the
  // unified one (cgroup v2) when no v1 hierarchy holds it.
  std::string fallback_controller = "cpuacct";
};

// The kubelet's request back from cpu shares (kubelet's sharesToMilliCPU: shares = milliCPU x
// 1024 / 1000, at least 2): ceil(shares x 1000 / 1024) milli-cores; 2 shares or fewer is no
// request (0). Limit: quota / period when both are positive, else 0.
double CpuRequestCores(uint64_t cpu_shares);
double CpuLimitCores(int64_t cpu_quota, uint64_t cpu_period);

// A channel to a CRI endpoint ("unix:///run/containerd/containerd.sock", or an absolute socket
// path), with the kubelet's 16 MiB message limit: a node's container list outgrows gRPC's
// 4 MiB.
std::shared_ptr<grpc::Channel> RuntimeChannel(const std::string& endpoint);

class ContainerDirectory {
 public:
  explicit ContainerDirectory(std::shared_ptr<grpc::Channel> channel,
                              ContainerDirectoryOptions options = {});
  ~ContainerDirectory();
  ContainerDirectory(const ContainerDirectory&) = delete;
  ContainerDirectory& operator=(const ContainerDirectory&) = delete;

  // The running containers, ordered by pod uid then container name. An error (the gRPC code
  // and the runtime's message, naming the call) when the runtime cannot be listed.
  StatusOr<std::vector<ContainerEntry>> Refresh();

  // Containers left out of a refresh because they could not be described, since construction
  // (one left out of several refreshes counts once per refresh; removed ones do not count).
  uint64_t skipped_total() const { return skipped_total_; }
  // Containers whose description is kept.
  size_t cached() const { return cache_.size(); }

 private:
  struct Described {
    RuntimeInfo info;
    std::string cgroup_path;
  };
  class Runtime;  // the CRI stub and its calls

  // Fills `entry` from what is kept, or from the runtime. False when it is left out of this
  // refresh; an error only when the runtime cannot be reached at all.
  StatusOr<bool> Describe(ContainerEntry& entry, bool& status_timed_out);
  StatusOr<Described> Ask(const ContainerEntry& entry);
  StatusOr<std::string> CgroupOf(const RuntimeInfo& info) const;
  void Skip(const ContainerEntry& entry, const Status& why);
  // Drops what is kept for containers that no longer run.
  void Forget(const std::unordered_set<std::string>& running);

  const ContainerDirectoryOptions options_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<RateLimitedLog> skip_log_;
  std::unordered_map<std::string, Described> cache_;  // by container id
  uint64_t skipped_total_ = 0;
};

}  // namespace qrm::advisor
