// HostView: what qrm-host says about the node, read over its admin socket (api/admin_v1.proto,
// the API qrmctl uses): every admitted container's identity and QoS level, the dedicated
// CPUs, and the CPU plugin's allocatable CPUs. The advisor never includes qrm-host's code.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "api/admin_v1.grpc.pb.h"
#include "common/cpu_set.h"
#include "common/status.h"

namespace qrm::advisor {

struct HostContainer {
  std::string pod_name;
  std::string pod_namespace;
  std::string qos_level;
  std::string cpuset;  // what the runtime was told ("" when qrm set none)
};

struct HostView {
  // "<pod uid>/<container name>" -> the container.
  std::map<std::string, HostContainer> containers;
  int allocatable_cpus = 0;  // online - reserved, as the CPU plugin reports it (0: no plugin)
  CpuSet dedicated;          // union of dedicated_cores containers' cpusets
  // CPUs neither reserved nor dedicated: the shared and reclaimed pools together.
  int PoolCpus() const;
  // The shared pool's size as the allocations show it: the largest cpuset of a shared_cores
  // container, else from a reclaimed_cores one (a reclaimed pool of R CPUs leaves
  // PoolCpus() - R; reclaimed containers on every pool CPU run in the shared pool); nullopt
  // when neither exists.
  std::optional<int> SharedPoolSize() const;
};

// Builds a view from the admin API's answers; kDataLoss naming the pod and container for a
// cpuset that does not parse.
StatusOr<HostView> MakeHostView(const admin::v1::ListAllocationsResponse& allocations,
                                const admin::v1::GetAllocatableResponse& allocatable);

// qrm-host's answers as they came (the node report's topology is built from them).
struct HostAnswers {
  admin::v1::ListAllocationsResponse allocations;
  admin::v1::GetAllocatableResponse allocatable;
};

class HostClient {
 public:
  // `socket` is qrm-host's admin socket path.
  HostClient(std::string socket, std::chrono::milliseconds timeout);
  // kUnavailable (naming the socket) when qrm-host does not answer.
  StatusOr<HostView> Fetch();
  StatusOr<HostAnswers> FetchAnswers();

 private:
  std::string socket_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<admin::v1::Admin::Stub> stub_;
};

}  // namespace qrm::advisor
