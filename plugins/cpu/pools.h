// The four CPU pools and how they are carved out of the machine.
//
//   reserved   fixed at start (--reserved-cpus / --reserved-cpu-count); system_cores run here
//   dedicated  the exclusive CPUs of dedicated_cores containers
//   reclaimed  `reclaimed_size` CPUs for reclaimed_cores containers, taken from the highest
//              free ids, split evenly over the NUMA nodes with CPUs in whole-core units; by
//              default ("auto") empty until a reclaimed_cores container exists
//   shared     everything else; shared_cores containers run here
//
// The pools are recomputed from scratch after every change to the dedicated set or to the
// reclaimed size, so they are a pure function of (machine, reserved, dedicated, size): a
// restarted plugin derives exactly the same pools from its checkpoint.
#pragma once

#include <limits>
#include <string>

#include "common/cpu_set.h"
#include "common/status.h"
#include "plugins/cpu/cpu_layout.h"

namespace qrm::cpu {

struct CpuPools {
  CpuSet reserved;
  CpuSet dedicated;
  CpuSet reclaimed;
  CpuSet shared;

  friend bool operator==(const CpuPools&, const CpuPools&) = default;
};

enum class TakeOrder { kLowestFirst, kHighestFirst };

// Takes `count` CPUs of `from`, spread evenly over the NUMA nodes: whole cores are dealt to the
// nodes round robin (starting at the lowest node for kLowestFirst, the highest for
// kHighestFirst), a final partial core goes to the next node in turn, and a node that runs out
// drops out of the round. Within a node whole free cores are taken first, in `order`, then
// single threads. Takes everything when `from` holds fewer than `count` CPUs.
CpuSet TakeSpread(const CpuLayout& layout, const CpuSet& from, int count, TakeOrder order);

// The smallest shared pool: shared_cores containers need at least one CPU to run on.
inline constexpr int kMinSharedCpus = 1;

// Pools for a reclaimed pool of `reclaimed_size` CPUs. Size 0 means no reclaimed pool of its
// own: reclaimed_cores containers then run in the shared pool (on a small machine, or when
// the QoS system gives every spare CPU back to online work). kInvalidArgument naming
// "reclaimed" and the value when it is negative or leaves fewer than kMinSharedCpus CPUs for
// the shared pool. `reserved` and `dedicated` must be disjoint subsets of the machine.
StatusOr<CpuPools> ComputePools(const CpuLayout& layout, const CpuSet& reserved,
                                const CpuSet& dedicated, int reclaimed_size);

// The largest reclaimed pool the machine allows with these reserved and dedicated CPUs.
int MaxReclaimedSize(const CpuLayout& layout, const CpuSet& reserved, const CpuSet& dedicated);

// The reclaimed size setting "auto", the default. An empty machine has nothing to reclaim
// from, and CPUs set aside for offline work nobody runs are taken from every shared container
// (half of a 2-CPU node). So: no pool while no reclaimed_cores container is held; while one is,
// a quarter of the CPUs neither reserved nor dedicated, at least 1 and at most
// kAutoReclaimedMax, never more than MaxReclaimedSize. It yields to dedicated admissions
// (shrinking to 0, when its containers share the shared pool) instead of refusing them.
inline constexpr int kReclaimedAuto = std::numeric_limits<int>::min();
inline constexpr int kAutoReclaimedMax = 4;  // the design document's example 1 pool

// The size the auto setting gives now; `reclaimed_work`: a reclaimed_cores container is held.
int AutoReclaimedSize(const CpuLayout& layout, const CpuSet& reserved, const CpuSet& dedicated,
                      bool reclaimed_work);

// A size setting for messages: "auto" or the number.
std::string ReclaimedSizeText(int setting);

}  // namespace qrm::cpu
