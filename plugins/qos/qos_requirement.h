// QosRequirement: what a container's QoS asks of the CPU, memory and NIC plugins, resolved
// from its pod's annotations and the plugin's role table.
//
// Two annotation families are accepted (see docs/annotations.md):
//   * katalyst: `katalyst.kubewharf.io/qos_level` (dedicated_cores | shared_cores |
//     reclaimed_cores | system_cores) and `katalyst.kubewharf.io/memory_enhancement`, a JSON
//     object such as {"numa_binding":"true","numa_exclusive":"true"};
//   * the QRM design document: `kubernetes.io/pod-role`, looked up in a role table the operator
//     configures (role -> QoS level, NUMA binding, exclusivity, NUMA anti-affinity).
// A pod role wins when both are present (the ResourceRequest's pod_role field, which the host
// fills from the annotation, is read first). No annotation at all means shared_cores.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/status.h"

namespace qrm::plugins {

inline constexpr std::string_view kQosLevelKey = "katalyst.kubewharf.io/qos_level";
inline constexpr std::string_view kMemoryEnhancementKey =
    "katalyst.kubewharf.io/memory_enhancement";
inline constexpr std::string_view kPodRoleKey = "kubernetes.io/pod-role";

enum class QosLevel { kShared, kReclaimed, kDedicated, kSystem };

std::string_view QosLevelName(QosLevel level);  // "shared_cores", ...
StatusOr<QosLevel> ParseQosLevel(std::string_view name);

// One row of the role table.
struct RoleSpec {
  std::string name;
  QosLevel level = QosLevel::kShared;
  bool numa_binding = false;    // pinned to the NUMA node(s) of its hint (cpuset.mems too)
  bool numa_exclusive = false;  // no other NUMA-bound pod may share its NUMA node(s)
  // Roles that must never share a NUMA node with this one; "*" means every other role
  // (the document's example 3: pods of the same role may share a node, nobody else may).
  // The relation is symmetric: either side listing the other is enough.
  std::vector<std::string> numa_anti_affinity;
};

// The operator's role table. JSON form (a plugin config key "roles"):
//   {"storage-service": {"qos_level": "dedicated_cores", "numa_binding": true,
//                        "numa_anti_affinity": ["reranker"]},
//    "ETL": {"qos_level": "reclaimed_cores"}}
// Keys per role: qos_level (required), numa_binding, numa_exclusive (booleans, default false),
// numa_anti_affinity (array of role names or "*"). Unknown keys, wrong types, unknown levels,
// and anti-affinity entries naming roles absent from the table are errors naming the role,
// the key and the value.
class RoleTable {
 public:
  RoleTable() = default;
  static StatusOr<RoleTable> Parse(std::string_view json);

  const RoleSpec* Find(const std::string& role) const;  // nullptr when absent
  bool empty() const { return roles_.empty(); }
  const std::map<std::string, RoleSpec>& roles() const { return roles_; }

  // Whether a pod of role `a` and one of role `b` may not share a NUMA node. Empty role
  // names (pods without a role) are never anti-affine.
  bool AntiAffine(const std::string& a, const std::string& b) const;

 private:
  std::map<std::string, RoleSpec> roles_;
};

struct QosRequirement {
  QosLevel level = QosLevel::kShared;
  bool numa_binding = false;
  bool numa_exclusive = false;
  std::string role;  // "" unless it came from the role table

  bool dedicated() const { return level == QosLevel::kDedicated; }
  // NUMA-bound containers get cpuset.mems and per-NUMA accounting.
  bool numa_bound() const { return numa_binding || numa_exclusive; }
};

// Resolves a container's requirement from the pod role (ResourceRequest.pod_role, else the
// annotation) and the katalyst annotations. Errors (kInvalidArgument) name the key and value:
//   unknown qos_level, memory_enhancement that is not a JSON object of "true"/"false" strings
//   or booleans, a pod role missing from the table, numa_binding on a level that cannot be
//   NUMA-bound (reclaimed_cores, system_cores).
StatusOr<QosRequirement> ResolveQos(const std::map<std::string, std::string>& annotations,
                                    const std::string& pod_role, const RoleTable& roles);
StatusOr<QosRequirement> ResolveQos(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                                    const RoleTable& roles);

// The requested quantity of `resource` in the request; kInvalidArgument naming the resource and
// value when it is missing, negative, NaN/inf or above `max` (e.g. 1e9 CPUs).
StatusOr<double> RequestedQuantity(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                                   const std::string& resource, double max);

}  // namespace qrm::plugins
