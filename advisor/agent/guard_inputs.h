// The watermark guard's view of the node, built from the agent's last tick (docs/guard.md,
// "In qrm-advisor"): the node's CPU and memory samples with their capacities, and every pod
// with its QoS level, usage, request, limit and start, summed over its containers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "advisor/agent/agent.h"
#include "advisor/guard/guard_round.h"

namespace qrm::advisor {

// One container of a guarded pod: what a throttle is split by and gives back.
struct GuardedContainer {
  std::string name;
  std::optional<double> cpu;  // cores, last tick
  int64_t quota_us = 0;       // the runtime's own quota and period (0: none)
  int64_t period_us = 0;
};

struct GuardedPod {
  std::string uid;
  std::vector<GuardedContainer> containers;
};

struct GuardInput {
  guard::RoundInput round;
  std::map<std::string, GuardedPod> pods;  // by GuardCandidate::Key() ("namespace/name")
};

// From the state of the agent's last tick; `now` is the round's time. A pod's CPU usage is
// the sum of its containers' when at least one was sampled (a container on its first reading
// has none yet), its memory the sum of working sets; its QoS level the first non-empty one of
// its containers (qrm-host admits a pod at one level).
GuardInput BuildGuardInput(const AgentState& state, int64_t now);

}  // namespace qrm::advisor
