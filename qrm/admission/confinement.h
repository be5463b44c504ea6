// Confinement of containers admitted without their CPU placement.
//
// Under the "ignore" failure policy a container is admitted while a plugin is down; when no
// allocation it got sets cpuset_cpus (the CPU plugin was the one skipped), the runtime would run
// it on every CPU, the exclusive CPUs of dedicated_cores containers included. The host knows
// every exclusive allocation from its checkpoint, so such a container is confined to the online
// CPUs no exclusive allocation holds: at admission, on re-admission, whenever its owned fields
// are rebuilt, and each reconcile tick while the resource stays skipped (the exclusive set moves
// as dedicated pods come and go). Once the skipped plugin allocates, its cpuset wins.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "common/cpu_set.h"
#include "common/mutex.h"
#include "common/status.h"
#include "qos/qos_requirement.h"
#include "qrm/apply/container_update.h"
#include "qrm/state/pod_resources.h"

namespace qrm::admission {

// The resources a container was admitted without (kSkippedResourcesAnnotation) that it still
// holds no allocation of.
std::set<std::string> StillSkipped(const state::ContainerAllocation& container);

// The CPUs of every container in `pods` whose QoS resolves to dedicated_cores (the one
// resolver, with the host's role table); `except` (pod uid, container) is left out.
CpuSet ExclusiveCpus(const state::PodResources& pods, const qos::RoleTable& roles,
                     const std::pair<std::string, std::string>& except = {});

class Confinement {
 public:
  // `online`: the machine's online CPUs; nullopt disables confinement (unknown machine).
  Confinement(std::optional<CpuSet> online, const qos::RoleTable& roles)
      : online_(std::move(online)), roles_(roles) {}

  // Sets update->resources.cpuset_cpus for a container that needs confinement (still skipped,
  // nothing sets its CPUs) and remembers it; otherwise leaves `update` alone. kFailedPrecondition
  // when exclusive allocations hold every online CPU.
  Status Apply(const std::string& pod_uid, const std::string& container,
               const state::ContainerAllocation& allocation, const state::PodResources& pods,
               apply::ContainerUpdate* update);

  // For the reconcile tick: confines the containers of `updates` that need it, and adds to
  // `pending` every confined container whose allowed CPUs changed since they were last set.
  void Refresh(const state::PodResources& pods,
               std::map<std::pair<std::string, std::string>, apply::ContainerUpdate>& updates,
               std::map<std::pair<std::string, std::string>, bool>& pending);

 private:
  std::optional<CpuSet> Allowed(const state::PodResources& pods,
                                const std::pair<std::string, std::string>& key) const;

  const std::optional<CpuSet> online_;
  const qos::RoleTable& roles_;
  Mutex mu_;
  std::map<std::pair<std::string, std::string>, std::string> last_
      QRM_GUARDED_BY(mu_);  // cpuset last handed out
};

}  // namespace qrm::admission
