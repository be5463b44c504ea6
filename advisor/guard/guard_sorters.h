// Composable pod orders (the precise-execution document's sorters): the order in which
// candidates give way. Each key compares two pods; an order is a chain of keys, the first one
// that tells them apart decides, and the pods' namespace/name breaks the last ties so that an
// order is total and a round is reproducible.
//
//   classAndPriority  reclaimed_cores before shared_cores, then the lower priority value
//   runningTime       the pod that has run for less first
//   cpuUsage          the higher CPU usage first (it closes a CPU gap soonest); unsampled last
//   memoryUsage       the higher memory usage first; unsampled last
//   extCpuUsage       pods using extended CPU first, among them the higher usage / limit
//
// Defaults (the document's): GeneralOrder = classAndPriority, runningTime; CpuUsageOrder =
// classAndPriority, cpuUsage, extCpuUsage, runningTime; MemoryUsageOrder = classAndPriority,
// memoryUsage, runningTime.
#pragma once

#include <vector>

#include "advisor/guard/guard_candidate.h"

namespace qrm::advisor::guard {

// < 0: `a` gives way before `b`; > 0: after; 0: this key cannot tell them apart.
using PodKey = int (*)(const GuardCandidate& a, const GuardCandidate& b);

int ClassAndPriority(const GuardCandidate& a, const GuardCandidate& b);
int RunningTime(const GuardCandidate& a, const GuardCandidate& b);
int CpuUsage(const GuardCandidate& a, const GuardCandidate& b);
int MemoryUsage(const GuardCandidate& a, const GuardCandidate& b);
int ExtCpuUsage(const GuardCandidate& a, const GuardCandidate& b);

struct PodOrder {
  std::vector<PodKey> keys;

  // Whether `a` gives way before `b`.
  bool Before(const GuardCandidate& a, const GuardCandidate& b) const;
  // Sorts `pods` into this order.
  void Sort(std::vector<GuardCandidate>& pods) const;
  // The same for pointers: a round sorts each metric's order without copying the pods.
  void Sort(std::vector<const GuardCandidate*>& pods) const;
};

PodOrder GeneralOrder();
PodOrder CpuUsageOrder();
PodOrder MemoryUsageOrder();

}  // namespace qrm::advisor::guard
