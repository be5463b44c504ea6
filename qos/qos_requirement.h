// QosRequirement: what a container's QoS asks of the host and of the CPU, memory and NIC
// plugins, resolved from its pod's labels, annotations and the operator's role table. This is
// the one resolver: qrm-host (failure policy, confinement), the plugins, admin/qrmctl and the
// metrics all call it, so they never disagree about a pod's level.
//
// Two families are accepted (see docs/annotations.md):
//   * katalyst: `katalyst.kubewharf.io/qos_level` (dedicated_cores | shared_cores |
//     reclaimed_cores | system_cores) and `katalyst.kubewharf.io/memory_enhancement`, a JSON
//     object such as {"numa_binding":"true","numa_exclusive":"true"};
//   * roles: the pod's role, looked up in a role table the operator configures (role -> QoS
//     level, NUMA binding, exclusivity, NUMA anti-affinity). The role is the kubewharf label
//     `katalyst.kubewharf.io/pod_role` (what the kubewharf kubelet sends as
//     ResourceRequest.pod_role), else the QRM design document's annotation
//     `kubernetes.io/pod-role` (qrm's extension).
// A pod role wins when both are present (the ResourceRequest's pod_role field, which the host
// fills with PodRoleOf, is read first). No annotation at all means shared_cores, and
// `annotated` tells the two apart (the host's failure policy treats them differently).
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/protocol_keys.h"
#include "common/status.h"

namespace qrm::qos {

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
  // The level was asked for (a qos_level annotation or a role), not defaulted to shared_cores.
  bool annotated = false;

  bool dedicated() const { return level == QosLevel::kDedicated; }
  // NUMA-bound containers get cpuset.mems and per-NUMA accounting.
  bool numa_bound() const { return numa_binding || numa_exclusive; }
};

// The pod's role: the label katalyst.kubewharf.io/pod_role, else the annotation
// kubernetes.io/pod-role; "" when neither is set.
std::string PodRoleOf(const std::map<std::string, std::string>& labels,
                      const std::map<std::string, std::string>& annotations);
// The pod's type: the annotation katalyst.kubewharf.io/pod_type ("" when absent).
std::string PodTypeOf(const std::map<std::string, std::string>& annotations);

// Resolves a container's requirement from the pod role (`pod_role`, else the annotation) and
// the katalyst annotations. Errors (kInvalidArgument) name the key and value:
//   unknown qos_level, memory_enhancement that is not a JSON object of "true"/"false" strings
//   or booleans, a pod role missing from the table, numa_binding on a level that cannot be
//   NUMA-bound (reclaimed_cores, system_cores).
StatusOr<QosRequirement> ResolveQos(const std::map<std::string, std::string>& annotations,
                                    const std::string& pod_role, const RoleTable& roles);
// What the host calls: the role from PodRoleOf(labels, annotations).
StatusOr<QosRequirement> ResolveQos(const std::map<std::string, std::string>& labels,
                                    const std::map<std::string, std::string>& annotations,
                                    const RoleTable& roles);
// What the plugins call: ResourceRequest.pod_role, else PodRoleOf(labels, annotations).
StatusOr<QosRequirement> ResolveQos(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                                    const RoleTable& roles);

// The role table from the `roles` JSON text or the file `roles_file` names (the same JSON);
// both set is an error, neither is an empty table. Errors name the key (and the file).
StatusOr<RoleTable> LoadRoleTable(std::string_view roles_json, const std::string& roles_file);

// The requested quantity of `resource` in the request; kInvalidArgument naming the resource and
// value when it is missing, negative, NaN/inf or above `max` (e.g. 1e9 CPUs).
StatusOr<double> RequestedQuantity(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                                   const std::string& resource, double max);

}  // namespace qrm::qos
