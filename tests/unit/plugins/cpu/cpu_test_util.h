// Helpers for the CPU plugin tests: fake machines, requests, and the design document's role
// table.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "machine/discovery.h"
#include "plugins/cpu/cpu_plugin.h"
#include "testing/machine/fake_machine.h"
#include "testing/temp_dir.h"

namespace qrm::cpu::testing {

namespace pb = ::resourceplugin::v1alpha1;
using qrm::testing::TempDir;

// The roles of the design document's examples 1-3.
inline constexpr const char* kDocRoles = R"({
  "online-micro_service": {"qos_level": "shared_cores"},
  "ETL": {"qos_level": "reclaimed_cores"},
  "storage-service": {"qos_level": "dedicated_cores", "numa_binding": true,
                      "numa_anti_affinity": ["reranker"]},
  "reranker": {"qos_level": "dedicated_cores", "numa_binding": true},
  "numa-enhancement": {"qos_level": "dedicated_cores", "numa_binding": true,
                       "numa_anti_affinity": ["*"]},
  "storage-exclusive": {"qos_level": "dedicated_cores", "numa_binding": true,
                        "numa_exclusive": true},
  "batch": {"qos_level": "dedicated_cores"},
  "system": {"qos_level": "system_cores"}
})";

// Discovers a built-in fake machine shape ("doc80", "4x32smt", "nosmt", "memonly"), once per
// shape and test process (writing the tree is the slow part).
inline machine::MachineTopology FakeTopology(const std::string& shape_name) {
  static std::map<std::string, machine::MachineTopology> cache;
  if (auto it = cache.find(shape_name); it != cache.end()) return it->second;
  TempDir dir;
  auto shape = machine::fake::ShapeByName(shape_name);
  REQUIRE(shape.ok());
  auto paths = machine::fake::WriteFakeMachine(*shape, dir.path());
  INFO(paths.status().ToString());
  REQUIRE(paths.ok());
  machine::DiscoveryOptions options = paths->Options();
  options.discover_nics = false;
  auto topology = machine::Discover(options);
  INFO(topology.status().ToString());
  REQUIRE(topology.ok());
  return cache[shape_name] = *topology;
}

inline std::unique_ptr<CpuPlugin> MakePlugin(const machine::MachineTopology& topology,
                                             CpuPluginConfig config = {}) {
  if (config.roles_json.empty()) config.roles_json = kDocRoles;
  auto plugin = CpuPlugin::Create(topology, std::move(config));
  INFO(plugin.status().ToString());
  REQUIRE(plugin.ok());
  return std::move(*plugin);
}

// A request for `cpus` CPUs by a pod of `role` (empty: none), with optional annotations.
inline pb::ResourceRequest Request(const std::string& uid, const std::string& role, double cpus,
                                   std::map<std::string, std::string> annotations = {},
                                   const std::string& container = "container0") {
  pb::ResourceRequest req;
  req.set_pod_uid(uid);
  req.set_pod_namespace("default");
  req.set_pod_name("pod-" + uid);
  req.set_container_name(container);
  req.set_container_type(pb::MAIN);
  req.set_pod_role(role);
  req.set_resource_name("cpu");
  (*req.mutable_resource_requests())["cpu"] = cpus;
  for (const auto& [k, v] : annotations) (*req.mutable_annotations())[k] = v;
  return req;
}

inline pb::ResourceRequest WithHint(pb::ResourceRequest req, std::vector<int> nodes,
                                    bool preferred = true) {
  req.mutable_hint()->clear_nodes();
  for (int n : nodes) req.mutable_hint()->add_nodes(static_cast<uint64_t>(n));
  req.mutable_hint()->set_preferred(preferred);
  return req;
}

// A hint list as "0*,1,0-1" (preferred ones starred), for readable comparisons.
inline std::string HintText(const pb::ListOfTopologyHints& list) {
  std::string text;
  for (const auto& h : list.hints()) {
    NumaMask mask;
    for (uint64_t n : h.nodes()) mask = mask.With(static_cast<int>(n));
    if (!text.empty()) text += " ";
    text += mask.ToString() + (h.preferred() ? "*" : "");
  }
  return text;
}

// The CPU hints of `req`, as HintText; "absent" when the response has no "cpu" entry.
inline std::string Hints(CpuPlugin& plugin, const pb::ResourceRequest& req) {
  auto resp = plugin.GetTopologyHints(req);
  INFO(resp.status().ToString());
  REQUIRE(resp.ok());
  auto it = resp->resource_hints().find("cpu");
  return it == resp->resource_hints().end() ? "absent" : HintText(it->second);
}

inline pb::ResourceAllocationInfo AllocateOk(CpuPlugin& plugin, const pb::ResourceRequest& req) {
  auto resp = plugin.Allocate(req);
  INFO(resp.status().ToString());
  REQUIRE(resp.ok());
  return resp->allocation_result().resource_allocation().at("cpu");
}

// Every container's current cpuset, "uid/container" -> cpus.
inline std::map<std::string, std::string> Cpusets(CpuPlugin& plugin) {
  auto resp = plugin.GetResourcesAllocation();
  REQUIRE(resp.ok());
  std::map<std::string, std::string> out;
  for (const auto& [uid, containers] : resp->pod_resources()) {
    for (const auto& [name, alloc] : containers.container_resources()) {
      out[uid + "/" + name] = alloc.resource_allocation().at("cpu").allocation_result();
    }
  }
  return out;
}

}  // namespace qrm::cpu::testing
