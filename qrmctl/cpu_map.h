// CpuMap: who holds each CPU of the machine, for `qrmctl topology`.
//
// Built from the machine (sysfs), the host's allocations and the plugins' allocatable
// reports: reserved CPUs are the online ones the CPU plugin does not report allocatable
// (annotation qrm.io/cpus per NUMA node); a dedicated_cores container's cpuset belongs to its
// pod; a reclaimed_cores container's cpuset, where no shared_cores container runs, is the
// reclaimed pool; the rest of the
// allocatable CPUs form the shared pool (the CPU plugin's definition).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/admin_v1.pb.h"
#include "machine/topology.h"

namespace qrm::ctl {

enum class Owner { kReserved, kShared, kReclaimed, kDedicated, kUnknown };

struct CpuCell {
  Owner owner = Owner::kUnknown;
  std::string pod;  // "namespace/name" for dedicated CPUs
  char key = '?';   // one character for the picture
};

struct NodeMemory {
  double capacity = 0;     // bytes
  double allocatable = 0;  // bytes
  double allocated = 0;    // bytes, by containers bound to this node
};

struct CpuMap {
  std::map<int, CpuCell> cpus;                       // by CPU id
  std::vector<std::pair<char, std::string>> legend;  // pod keys
  std::map<int, NodeMemory> memory;                  // by NUMA node
  bool cpu_plugin_reported = false;                  // false: reserved/shared are guesses
};

CpuMap BuildCpuMap(const machine::MachineTopology& machine,
                   const ::qrm::admin::v1::ListAllocationsResponse& allocations,
                   const ::qrm::admin::v1::GetAllocatableResponse& allocatable);

}  // namespace qrm::ctl
