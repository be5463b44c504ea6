// CpuRequest: a ResourceRequest read and checked once, before the plugin takes its lock.
#pragma once

#include <cstdint>
#include <optional>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/numa_mask.h"
#include "common/status.h"
#include "plugins/cpu/cpu_layout.h"
#include "plugins/cpu/hints.h"
#include "qos/qos_requirement.h"

namespace qrm::cpu {

struct CpuRequest {
  qos::QosRequirement qos;
  int64_t milli = 0;   // the requested quantity in milli-CPUs
  int whole_cpus = 0;  // rounded up: dedicated containers get whole CPUs
  NumaMask hint;       // the host's merged affinity; empty = none
  bool hint_preferred = false;
  // Dedicated only: the CPUs the container held before the plugin lost its state (the host's
  // replay, common/protocol_keys.h); taken again when still free.
  std::optional<CpuSet> previous;

  DedicatedRequest Dedicated() const {
    return {whole_cpus, qos.numa_bound(), qos.numa_exclusive, qos.role};
  }
};

// kInvalidArgument, naming the field and the value, for: an empty pod uid or container name,
// anything ResolveQos refuses (unknown qos level, malformed memory_enhancement, a role missing
// from the table), a negative / NaN / infinite CPU quantity or one above the machine's online
// CPUs, a dedicated request of 0 CPUs or above the `allocatable` CPUs, and a hint naming a NUMA
// node the machine does not have, and a previous-allocation annotation that is not a set of
// online CPUs. A request without "cpu" asks for 0 CPUs.
StatusOr<CpuRequest> ParseCpuRequest(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                                     const qos::RoleTable& roles, const CpuLayout& layout,
                                     int allocatable);

}  // namespace qrm::cpu
