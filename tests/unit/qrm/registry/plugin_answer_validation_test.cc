// Validation of resource plugin answers where the host receives them
// (qrm/registry/plugin_answer_validation.h): each refusal names the field and the value.
#include "qrm/registry/plugin_answer_validation.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include <catch2/catch.hpp>

#include "testing/temp_dir.h"

namespace qrm::registry {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using Catch::Matchers::Contains;

// A 2-CPU, 1-node machine, like the build machine.
MachineLimits SmallMachine() {
  MachineLimits m;
  m.online_cpus = *CpuSet::Parse("0-1");
  m.numa_nodes = NumaMask::FromBits(0b1);
  return m;
}

pb::ResourceAllocationInfo Info(const std::string& property, const std::string& result,
                                double quantity = 1) {
  pb::ResourceAllocationInfo info;
  info.set_oci_property_name(property);
  info.set_allocation_result(result);
  info.set_allocated_quantity(quantity);
  return info;
}

// Writes `content` at `relative` under `root`, creating the directories on the way.
void WriteSysfs(const testing::TempDir& root, const std::string& relative,
                const std::string& content) {
  const std::string path = root.File(relative);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  testing::WriteFile(path, content);
}

void CheckRefused(const Status& s, const std::string& expected) {
  INFO(s.ToString());
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.message(), Contains(expected));
}

TEST_CASE("a good allocation passes on the machine it fits", "[registry][validation]") {
  CHECK(ValidateAllocationInfo("cpu", Info("CpusetCpus", "0-1", 2), SmallMachine()).ok());
  CHECK(ValidateAllocationInfo("memory", Info("CpusetMems", "0", 0), SmallMachine()).ok());
  CHECK(ValidateAllocationInfo("nic", Info("", "eth0 (free text)"), SmallMachine()).ok());
}

TEST_CASE("allocated_quantity NaN, infinite or negative is refused", "[registry][validation]") {
  const MachineLimits m = SmallMachine();
  CheckRefused(ValidateAllocationInfo("cpu", Info("", "", std::nan("")), m),
               "resource \"cpu\": allocated_quantity nan: must be finite and >= 0");
  CheckRefused(
      ValidateAllocationInfo("cpu", Info("", "", std::numeric_limits<double>::infinity()), m),
      "allocated_quantity inf");
  CheckRefused(ValidateAllocationInfo("cpu", Info("", "", -2), m), "allocated_quantity -2");
}

TEST_CASE("cpusets must be well-formed and name only this machine's CPUs and nodes",
          "[registry][validation]") {
  const MachineLimits m = SmallMachine();
  CheckRefused(ValidateAllocationInfo("cpu", Info("CpusetCpus", "0-9999"), m),
               "CpusetCpus value \"0-9999\"");
  CheckRefused(ValidateAllocationInfo("cpu", Info("CpusetCpus", "0-3"), m),
               "resource \"cpu\": CpusetCpus value \"0-3\": CPUs 2-3 are not online on this "
               "machine (online: 0-1)");
  CheckRefused(ValidateAllocationInfo("cpu", Info("CpusetCpus", "1,a"), m),
               "CpusetCpus value \"1,a\"");
  CheckRefused(ValidateAllocationInfo("cpu", Info("CpusetCpus", ""), m),
               "CpusetCpus value \"\": is empty");
  CheckRefused(ValidateAllocationInfo("memory", Info("CpusetMems", "0-1"), m),
               "resource \"memory\": CpusetMems value \"0-1\": names NUMA nodes this machine "
               "does not have");
  // Without machine knowledge only the syntax is checked.
  CHECK(ValidateAllocationInfo("cpu", Info("CpusetCpus", "0-3"), MachineLimits{}).ok());
}

TEST_CASE("an unknown oci_property_name is refused with the value", "[registry][validation]") {
  CheckRefused(ValidateAllocationInfo("cpu", Info("CpuSetCpus", "0"), SmallMachine()),
               "resource \"cpu\": unknown oci_property_name \"CpuSetCpus\"");
  CheckRefused(ValidateAllocationInfo("cpu", Info("Devices", "/dev/sda"), SmallMachine()),
               "unknown oci_property_name \"Devices\"");
}

TEST_CASE("envs, annotations, hints and assignments in an allocation are checked",
          "[registry][validation]") {
  const MachineLimits m = SmallMachine();
  pb::ResourceAllocationInfo env = Info("", "");
  env.mutable_envs()->insert({"9LIVES", "x"});
  CheckRefused(ValidateAllocationInfo("nic", env, m), "env key \"9LIVES\"");

  pb::ResourceAllocationInfo ann = Info("", "");
  ann.mutable_annotations()->insert({"qrm.io/big", std::string(70000, 'a')});
  CheckRefused(ValidateAllocationInfo("nic", ann, m),
               "annotation key \"qrm.io/big\": value of 70000 bytes");

  pb::ResourceAllocationInfo hint = Info("", "");
  hint.mutable_resource_hints()->add_hints()->add_nodes(3);
  CheckRefused(ValidateAllocationInfo("nic", hint, m),
               "resource_hints: a hint names NUMA node 3, which this machine does not have");

  pb::ResourceAllocationInfo assigned = Info("", "");
  (*assigned.mutable_topology_assignments())[7] = 1;
  CheckRefused(ValidateAllocationInfo("nic", assigned, m),
               "topology_assignments names NUMA node 7");
}

TEST_CASE("hint answers: no nodes, nodes the machine lacks, absurd ids", "[registry][validation]") {
  const MachineLimits m = SmallMachine();
  google::protobuf::Map<std::string, pb::ListOfTopologyHints> hints;
  hints["cpu"].add_hints()->add_nodes(0);
  CHECK(ValidateHintsAnswer(hints, m).ok());
  hints["cpu"].add_hints()->add_nodes(1);
  CheckRefused(ValidateHintsAnswer(hints, m),
               "resource_hints for \"cpu\": a hint names NUMA node 1, which this machine does "
               "not have (nodes: 0)");
  CHECK(ValidateHintsAnswer(hints, MachineLimits{}).ok());  // node 1 exists somewhere
  hints["cpu"].mutable_hints(1)->set_nodes(0, 1ULL << 40);
  CheckRefused(ValidateHintsAnswer(hints, MachineLimits{}), "names NUMA node 1099511627776");
  hints["cpu"].mutable_hints(1)->clear_nodes();
  CheckRefused(ValidateHintsAnswer(hints, m), "resource_hints for \"cpu\": a hint has no nodes");
}

TEST_CASE("reconcile and capacity answers are checked the same way", "[registry][validation]") {
  const MachineLimits m = SmallMachine();
  pb::GetResourcesAllocationResponse all;
  (*(*(*all.mutable_pod_resources())["uid-1"].mutable_container_resources())["app"]
        .mutable_resource_allocation())["cpu"] = Info("CpusetCpus", "0-5");
  CheckRefused(ValidateResourcesAllocationAnswer(all, m),
               "pod \"uid-1\" container \"app\": resource \"cpu\": CpusetCpus value \"0-5\"");

  pb::GetTopologyAwareAllocatableResourcesResponse alloc;
  auto& r = (*alloc.mutable_allocatable_resources())["cpu"];
  r.set_aggregated_allocatable_quantity(2);
  r.set_aggregated_capacity_quantity(std::nan(""));
  CheckRefused(ValidateAllocatableAnswer(alloc, m),
               "resource \"cpu\" aggregated_capacity_quantity nan");
  r.set_aggregated_capacity_quantity(2);
  auto* q = r.add_topology_aware_capacity_quantity_list();
  q->set_node(4);
  q->set_resource_value(2);
  CheckRefused(ValidateAllocatableAnswer(alloc, m),
               "topology_aware_capacity_quantity_list names NUMA node 4");
  q->set_node(0);
  q->set_resource_value(-1);
  CheckRefused(ValidateAllocatableAnswer(alloc, m), "node 0 resource_value -1");
  q->set_resource_value(2);
  CHECK(ValidateAllocatableAnswer(alloc, m).ok());

  pb::GetTopologyAwareResourcesResponse used;
  auto& u =
      (*used.mutable_container_topology_aware_resources()->mutable_allocated_resources())["cpu"];
  u.set_aggregated_quantity(std::numeric_limits<double>::infinity());
  CheckRefused(ValidateTopologyAwareAnswer(used, m), "resource \"cpu\" aggregated_quantity inf");
}

TEST_CASE("machine limits are read from sysfs", "[registry][validation]") {
  testing::TempDir dir;
  WriteSysfs(dir, "devices/system/cpu/online", "0-3,6\n");
  WriteSysfs(dir, "devices/system/node/online", "0,2\n");
  auto m = LoadMachineLimits(dir.path());
  REQUIRE(m.ok());
  CHECK(m->online_cpus->ToString() == "0-3,6");
  CHECK(m->numa_nodes->ToString() == "0,2");

  testing::TempDir no_numa;
  WriteSysfs(no_numa, "devices/system/cpu/online", "0-1\n");
  auto single = LoadMachineLimits(no_numa.path());
  REQUIRE(single.ok());
  CHECK(single->numa_nodes->ToString() == "0");

  testing::TempDir empty;
  auto missing = LoadMachineLimits(empty.path());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK_THAT(missing.status().message(), Contains("devices/system/cpu/online"));
}

}  // namespace
}  // namespace qrm::registry
