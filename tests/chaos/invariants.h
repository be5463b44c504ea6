// The invariants every fault test checks after the fault is over: what the host says
// (admin ListAllocations), what the runtime runs (containerd directly, not through the
// shim), what the containers' cgroups hold, and what the plugins themselves still hold.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "tests/e2e/host/node_fixture.h"

namespace qrm::chaos {

// A container the runtime runs, with its pod and its cgroup's cpuset.
struct RunningContainer {
  std::string id, pod_uid, name, cpus;
};

// RUNNING containers, read from the runtime directly (cpus from the cgroup).
StatusOr<std::vector<RunningContainer>> ListRunning(e2e::CriClient& direct);
// Uids of the pods whose sandbox is ready.
StatusOr<std::set<std::string>> ReadyPods(e2e::CriClient& direct);
// Pod uids some plugin still holds an allocation for (GetResourcesAllocation on every
// plugin socket in the fixture's plugin directory). `answered` is how many plugins did.
StatusOr<std::set<std::string>> PluginPods(e2e::NodeFixture& node, int* answered = nullptr);

// One line per violation; empty if every invariant holds:
//  * every running container has an allocation, and its cgroup cpuset equals the
//    allocation's cpuset_cpus (when the allocation sets one);
//  * a dedicated_cores container's CPUs are in no other running container's cpuset;
//  * every pod with an allocation in the host or in a plugin has a ready sandbox (no
//    allocation outlives its pod);
//  * all three plugins answer.
std::vector<std::string> Violations(e2e::NodeFixture& node, e2e::CriClient& direct);

// Waits until Violations is empty (true), or `timeout` passed (false, with the last
// violations in `last`).
bool WaitConsistent(e2e::NodeFixture& node, e2e::CriClient& direct,
                    std::chrono::milliseconds timeout, std::vector<std::string>* last);

std::string Join(const std::vector<std::string>& lines);

}  // namespace qrm::chaos
