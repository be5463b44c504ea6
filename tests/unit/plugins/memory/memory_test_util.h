// Helpers for the memory plugin tests: fake machines, plugins on them, and requests.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "machine/discovery.h"
#include "plugins/memory/memory_plugin.h"
#include "testing/ledger_files.h"
#include "testing/machine/fake_machine.h"
#include "testing/temp_dir.h"

namespace qrm::memory::testutil {

namespace pb = ::resourceplugin::v1alpha1;

inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// The design document's example 2 roles: two NUMA-bound roles that never share a node, and
// an exclusive one.
inline constexpr const char* kRolesJson = R"({
  "storage-service": {"qos_level": "dedicated_cores", "numa_binding": true,
                      "numa_anti_affinity": ["reranker"]},
  "reranker": {"qos_level": "dedicated_cores", "numa_binding": true},
  "database": {"qos_level": "dedicated_cores", "numa_binding": true, "numa_exclusive": true},
  "web": {"qos_level": "shared_cores"}
})";

struct FakeMachine {
  machine::fake::FakeMachinePaths paths;
  machine::MachineTopology topology;
};

inline FakeMachine Generate(const machine::fake::FakeMachineShape& shape,
                            const qrm::testing::TempDir& dir,
                            const std::string& subdir = "machine") {
  auto paths = machine::fake::WriteFakeMachine(shape, dir.File(subdir));
  INFO(paths.status().ToString());
  REQUIRE(paths.ok());
  auto topo = machine::Discover(paths->Options());
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  return {*paths, *topo};
}

inline MemoryPluginConfig Config(const std::string& state_dir = "") {
  MemoryPluginConfig config;
  auto roles = qos::RoleTable::Parse(kRolesJson);
  REQUIRE(roles.ok());
  config.roles = *roles;
  config.state_dir = state_dir;
  return config;
}

inline std::unique_ptr<MemoryPlugin> Create(const MemoryPluginConfig& config,
                                            const machine::MachineTopology& topology) {
  auto plugin = MemoryPlugin::Create(config, topology);
  INFO(plugin.status().ToString());
  REQUIRE(plugin.ok());
  return std::move(*plugin);
}

// A request of `bytes` of memory for pod `pod` (uid "uid-<pod>"), container `container`.
inline pb::ResourceRequest Request(const std::string& pod, double bytes,
                                   const std::string& role = "",
                                   const std::map<std::string, std::string>& annotations = {},
                                   const std::string& container = "c0") {
  pb::ResourceRequest req;
  req.set_pod_uid("uid-" + pod);
  req.set_pod_namespace("default");
  req.set_pod_name(pod);
  req.set_container_name(container);
  req.set_container_type(pb::MAIN);
  req.set_pod_role(role);
  req.set_resource_name(kResourceName);
  (*req.mutable_resource_requests())[kResourceName] = bytes;
  for (const auto& [k, v] : annotations) (*req.mutable_annotations())[k] = v;
  return req;
}

inline pb::ResourceRequest WithHint(pb::ResourceRequest req, std::initializer_list<int> nodes,
                                    bool preferred = true) {
  for (int n : nodes) req.mutable_hint()->add_nodes(static_cast<uint64_t>(n));
  req.mutable_hint()->set_preferred(preferred);
  return req;
}

inline pb::ResourceAllocationInfo AllocateOk(MemoryPlugin& plugin, const pb::ResourceRequest& req) {
  auto resp = plugin.Allocate(req);
  INFO(resp.status().ToString());
  REQUIRE(resp.ok());
  const auto& allocations = resp->allocation_result().resource_allocation();
  REQUIRE(allocations.count(kResourceName) == 1);
  return allocations.at(kResourceName);
}

// A hint list as text, e.g. {"0", "1", "0-1*"} where '*' marks a non-preferred hint; `present`
// is false when the resource had no entry at all (no preference).
struct Hints {
  bool present = false;
  std::vector<std::string> list;
};

inline Hints HintsOk(MemoryPlugin& plugin, const pb::ResourceRequest& req) {
  auto resp = plugin.GetTopologyHints(req);
  INFO(resp.status().ToString());
  REQUIRE(resp.ok());
  Hints out;
  auto it = resp->resource_hints().find(kResourceName);
  if (it == resp->resource_hints().end()) return out;
  out.present = true;
  for (const auto& h : it->second.hints()) {
    std::vector<int64_t> ids(h.nodes().begin(), h.nodes().end());
    auto mask = NumaMask::FromNodes(ids);
    REQUIRE(mask.ok());
    out.list.push_back(mask->ToString() + (h.preferred() ? "" : "*"));
  }
  return out;
}

// The ledger's snapshot data, and one entry as the files hold it now (testing/ledger_files.h).
inline rapidjson::Document SnapshotData(const std::string& path) {
  auto data = qrm::testing::LedgerSnapshotData(path);
  INFO(data.status().ToString());
  REQUIRE(data.ok());
  return std::move(*data);
}

inline rapidjson::Document LedgerEntry(const std::string& path, const std::string& uid,
                                       const std::string& container) {
  auto entry = qrm::testing::LedgerEntry(path, uid, container);
  INFO(entry.status().ToString());
  REQUIRE(entry.ok());
  return std::move(*entry);
}

using qrm::testing::LedgerFileBytes;

}  // namespace qrm::memory::testutil
