// A container the advisor samples: who it is (from qrm-host's admin API, or only from the
// runtime for containers qrm did not admit) and where its cgroup is (from the runtime).
#pragma once

#include <string>

#include "advisor/usage/usage.h"

namespace qrm::advisor {

struct TrackedContainer {
  std::string pod_uid;
  std::string pod_name;
  std::string pod_namespace;
  std::string name;          // the container's name in its pod
  std::string container_id;  // the runtime's
  std::string cgroup_path;   // below the hierarchy root, as the runtime reports it
  // qrm's QoS level ("dedicated_cores", "shared_cores", "reclaimed_cores", "system_cores");
  // "" when qrm-host does not know the container (admitted before qrm, a skipped
  // namespace): it then counts as Prod, the safe side for the prediction.
  std::string qos_level;
  PriorityClass priority = PriorityClass::kProd;
  double cpu_request = 0;  // cores, from the runtime's cpu shares (0: none)
  double cpu_limit = 0;    // cores, quota / period (0: none)
  // As the runtime first described the container: what a CPU throttle gives back (0: absent).
  int64_t cpu_quota_us = 0, cpu_period_us = 0;
  int64_t created_unix = 0;  // its pod's start (Unix seconds; 0: unknown)
  bool dedicated() const { return qos_level == "dedicated_cores"; }
  bool reclaimed() const { return qos_level == "reclaimed_cores"; }
  bool shared() const { return qos_level == "shared_cores"; }
  // "<pod uid>/<container name>": the store's and the sampler's key.
  std::string Key() const { return pod_uid + "/" + name; }
};

// reclaimed_cores work is lent capacity (Koordinator's batch band); every other level (and an
// unknown one) is protected.
PriorityClass PriorityOfQosLevel(const std::string& qos_level);

}  // namespace qrm::advisor
