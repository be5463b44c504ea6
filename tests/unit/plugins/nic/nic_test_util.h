// Helpers for the NIC plugin tests: fake machines, plugins on them, and requests.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "machine/discovery.h"
#include "plugins/nic/nic_plugin.h"
#include "testing/machine/fake_machine.h"
#include "testing/temp_dir.h"

namespace qrm::nic::testutil {

namespace pb = ::resourceplugin::v1alpha1;

// The design document's example 3 role: NUMA-bound pods that may share a node.
inline constexpr const char* kRolesJson =
    R"({"numa-enhancement": {"qos_level": "dedicated_cores", "numa_binding": true}})";

struct FakeMachine {
  machine::fake::FakeMachinePaths paths;
  machine::MachineTopology topology;
};

inline FakeMachine Generate(const machine::fake::FakeMachineShape& shape,
                            const qrm::testing::TempDir& dir, int64_t unknown_nic_speed_mbps = 0) {
  auto paths = machine::fake::WriteFakeMachine(shape, dir.File("machine"));
  INFO(paths.status().ToString());
  REQUIRE(paths.ok());
  machine::DiscoveryOptions options = paths->Options();
  options.unknown_nic_speed_mbps = unknown_nic_speed_mbps;
  auto topo = machine::Discover(options);
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  return {*paths, *topo};
}

inline NicPluginConfig Config(const std::string& state_dir = "") {
  NicPluginConfig config;
  auto roles = qos::RoleTable::Parse(kRolesJson);
  REQUIRE(roles.ok());
  config.roles = *roles;
  config.state_dir = state_dir;
  return config;
}

inline std::unique_ptr<NicPlugin> Create(const NicPluginConfig& config,
                                         const machine::MachineTopology& topology) {
  auto plugin = NicPlugin::Create(config, topology);
  INFO(plugin.status().ToString());
  REQUIRE(plugin.ok());
  return std::move(*plugin);
}

// A request for `pod` (uid "uid-<pod>") container c0 with the given requests and annotations.
inline pb::ResourceRequest Request(const std::string& pod,
                                   const std::map<std::string, double>& requests = {},
                                   const std::map<std::string, std::string>& annotations = {},
                                   const std::string& role = "") {
  pb::ResourceRequest req;
  req.set_pod_uid("uid-" + pod);
  req.set_pod_namespace("default");
  req.set_pod_name(pod);
  req.set_container_name("c0");
  req.set_container_type(pb::MAIN);
  req.set_pod_role(role);
  req.set_resource_name(kNicResourceName);
  for (const auto& [k, v] : requests) (*req.mutable_resource_requests())[k] = v;
  for (const auto& [k, v] : annotations) (*req.mutable_annotations())[k] = v;
  return req;
}

inline pb::ResourceRequest WithHint(pb::ResourceRequest req, std::initializer_list<int> nodes,
                                    bool preferred = true) {
  for (int n : nodes) req.mutable_hint()->add_nodes(static_cast<uint64_t>(n));
  req.mutable_hint()->set_preferred(preferred);
  return req;
}

inline pb::ResourceAllocationInfo AllocateOk(NicPlugin& plugin, const pb::ResourceRequest& req) {
  auto resp = plugin.Allocate(req);
  INFO(resp.status().ToString());
  REQUIRE(resp.ok());
  const auto& allocations = resp->allocation_result().resource_allocation();
  REQUIRE(allocations.count(plugin.ResourceName()) == 1);
  return allocations.at(plugin.ResourceName());
}

// The hint masks (as "0", "0-1") of a hints response; `present` tells whether the resource
// had an entry at all (absent = no preference).
struct Hints {
  bool present = false;
  std::vector<std::string> nodes;
  std::vector<bool> preferred;
};

inline Hints HintsOk(NicPlugin& plugin, const pb::ResourceRequest& req) {
  auto resp = plugin.GetTopologyHints(req);
  INFO(resp.status().ToString());
  REQUIRE(resp.ok());
  Hints out;
  auto it = resp->resource_hints().find(plugin.ResourceName());
  if (it == resp->resource_hints().end()) return out;
  out.present = true;
  for (const auto& h : it->second.hints()) {
    std::vector<int64_t> ids(h.nodes().begin(), h.nodes().end());
    auto mask = NumaMask::FromNodes(ids);
    REQUIRE(mask.ok());
    out.nodes.push_back(mask->ToString());
    out.preferred.push_back(h.preferred());
  }
  return out;
}

}  // namespace qrm::nic::testutil
