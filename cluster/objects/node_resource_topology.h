// NodeResourceTopology (topology.node.k8s.io/v1alpha2, cluster scoped, one per node, named
// after it): the node's NUMA zones with capacity, allocatable and available per resource, and
// the topology manager's policy and scope as attributes, as the scheduler-plugins
// NodeResourceTopologyMatch plugin reads them. Field for field the upstream Go types
// (k8stopologyawareschedwg/noderesourcetopology-api pkg/apis/topology/v1alpha2/types.go).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/objects/object_meta.h"
#include "common/quantity.h"
#include "common/status.h"

namespace qrm::cluster {

inline constexpr const char* kNrtApiVersion = "topology.node.k8s.io/v1alpha2";
inline constexpr const char* kNrtKind = "NodeResourceTopology";
inline constexpr const char* kNrtPath =
    "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies";
// Attribute names and zone vocabulary the scheduler plugin reads.
inline constexpr const char* kTopologyManagerPolicyAttribute = "topologyManagerPolicy";
inline constexpr const char* kTopologyManagerScopeAttribute = "topologyManagerScope";
inline constexpr const char* kNumaZoneType = "Node";

struct NrtResourceInfo {
  std::string name;
  Quantity capacity, allocatable, available;
};

struct NrtCost {
  std::string name;
  int64_t value = 0;
};

struct NrtAttribute {
  std::string name, value;
};

struct NrtZone {
  std::string name;  // "node-<id>" for a NUMA node
  std::string type;  // "Node" for a NUMA node
  std::string parent;
  std::vector<NrtCost> costs;
  std::vector<NrtAttribute> attributes;
  std::vector<NrtResourceInfo> resources;
};

struct NodeResourceTopology {
  ObjectMeta metadata;
  std::vector<std::string> topology_policies;  // deprecated upstream; qrm writes none
  std::vector<NrtZone> zones;
  std::vector<NrtAttribute> attributes;
};

// "node-<id>" (the canonical NUMA zone name), and back (errors quote the name).
std::string NumaZoneName(int numa_id);
StatusOr<int> NumaZoneId(std::string_view name);

std::string EncodeNodeResourceTopology(const NodeResourceTopology& nrt);
// The members an update replaces, as JSON arrays ("[]" when empty).
std::string EncodeNrtZones(const std::vector<NrtZone>& zones);
std::string EncodeNrtAttributes(const std::vector<NrtAttribute>& attributes);
// Errors name the field path and the value; a negative quantity or available above
// allocatable above capacity is refused.
StatusOr<NodeResourceTopology> DecodeNodeResourceTopology(std::string_view text);

}  // namespace qrm::cluster
