// Golden-bytes tests for api/resourceplugin_v1alpha1.proto (package resourceplugin.v1alpha1).
// tag = (field_number << 3) | wire_type; doubles are wire type 1 (fixed64, little-endian
// IEEE-754), packed repeated scalars are one length-delimited field.

#include <catch2/catch.hpp>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "api/resourceplugin_v1alpha1.pb.h"
#include "tests/unit/api/wire_util.h"

namespace rp = resourceplugin::v1alpha1;
using qrm::test::Serialize;
using qrm::test::ToHex;
using qrm::test::Wire;

TEST_CASE("resourceplugin ResourceRequest with hint and double request", "[api][resourceplugin]") {
  rp::ResourceRequest req;
  req.set_pod_uid("p1");
  req.set_container_name("c");
  req.set_container_type(rp::MAIN);
  req.set_resource_name("cpu");
  req.mutable_hint()->add_nodes(0);
  req.mutable_hint()->add_nodes(1);
  req.mutable_hint()->set_preferred(true);
  (*req.mutable_resource_requests())["cpu"] = 2.5;
  (*req.mutable_annotations())["katalyst.kubewharf.io/qos_level"] = "dedicated_cores";

  const std::string golden = Wire(
      "0a 02 'p1'"   // field 1 (pod_uid)
      "22 01 'c'"    // field 4 (container_name)
      "28 01"        // field 5 (container_type) varint MAIN = 1
      "4a 03 'cpu'"  // field 9 (resource_name)
      // field 10 (hint) tag 0x52, TopologyHint 6 bytes:
      //   nodes(1) packed: 0a, 2 bytes, varints 0 and 1; preferred(2) varint true
      "52 06  0a 02 00 01  10 01"
      // field 11 (resource_requests) tag 0x5a, map entry 14 bytes:
      //   key(1) "cpu"; value(2) double: tag 0x11 = 2<<3|1, 2.5 = 0x4004000000000000 LE
      "5a 0e  0a 03 'cpu'  11 00 00 00 00 00 00 04 40"
      // field 13 (annotations) tag 0x6a, entry 50 bytes
      "6a 32  0a 1f 'katalyst.kubewharf.io/qos_level'  12 0f 'dedicated_cores'");
  CHECK(ToHex(Serialize(req)) == ToHex(golden));

  rp::ResourceRequest parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.pod_uid() == "p1");
  CHECK(parsed.container_name() == "c");
  CHECK(parsed.container_type() == rp::MAIN);
  CHECK(parsed.resource_name() == "cpu");
  REQUIRE(parsed.has_hint());
  REQUIRE(parsed.hint().nodes_size() == 2);
  CHECK(parsed.hint().nodes(0) == 0);
  CHECK(parsed.hint().nodes(1) == 1);
  CHECK(parsed.hint().preferred());
  CHECK(parsed.resource_requests().at("cpu") == 2.5);
  CHECK(parsed.annotations().at("katalyst.kubewharf.io/qos_level") == "dedicated_cores");
}

TEST_CASE("resourceplugin ResourceAllocationInfo with every field kind", "[api][resourceplugin]") {
  rp::ResourceAllocationInfo info;
  info.set_oci_property_name("CpusetCpus");
  info.set_is_node_resource(true);
  info.set_is_scalar_resource(true);
  info.set_allocated_quantity(4.0);
  info.set_allocation_result("0-3");
  (*info.mutable_envs())["QRM_CPUS"] = "0-3";
  (*info.mutable_annotations())["k"] = "v";
  auto* hint = info.mutable_resource_hints()->add_hints();
  hint->add_nodes(0);
  hint->set_preferred(true);
  (*info.mutable_topology_assignments())[1] = 4;
  auto* mount = info.add_mounts();
  mount->set_container_path("/a");
  mount->set_host_path("/b");
  mount->set_read_only(true);
  auto* dev = info.add_devices();
  dev->set_container_path("/dev/x");
  dev->set_host_path("/dev/x");
  dev->set_permissions("rw");

  const std::string golden = Wire(
      "0a 0a 'CpusetCpus'"  // field 1 (oci_property_name)
      "10 01"               // field 2 (is_node_resource) true
      "18 01"               // field 3 (is_scalar_resource) true
      // field 4 (allocated_quantity) tag 0x21 = 4<<3|1, 4.0 = 0x4010000000000000 LE
      "21 00 00 00 00 00 00 10 40"
      "2a 03 '0-3'"  // field 5 (allocation_result)
      // field 6 (envs) tag 0x32, entry 15 bytes: key "QRM_CPUS", value "0-3"
      "32 0f  0a 08 'QRM_CPUS'  12 03 '0-3'"
      "3a 06  0a 01 'k'  12 01 'v'"  // field 7 (annotations) entry 6 bytes
      // field 8 (resource_hints) ListOfTopologyHints 7 bytes: hints(1) -> TopologyHint 5 bytes
      "42 07  0a 05  0a 01 00  10 01"
      "4a 04  08 01  10 04"  // field 9 (topology_assignments) entry: key(1)=1, value(2)=4
      // field 10 (mounts) Mount 10 bytes: container_path(1), host_path(2), read_only(3)
      "52 0a  0a 02 '/a'  12 02 '/b'  18 01"
      // field 11 (devices) DeviceSpec 20 bytes: container_path(1), host_path(2), permissions(3)
      "5a 14  0a 06 '/dev/x'  12 06 '/dev/x'  1a 02 'rw'");
  CHECK(ToHex(Serialize(info)) == ToHex(golden));

  rp::ResourceAllocationInfo parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.oci_property_name() == "CpusetCpus");
  CHECK(parsed.is_node_resource());
  CHECK(parsed.is_scalar_resource());
  CHECK(parsed.allocated_quantity() == 4.0);
  CHECK(parsed.allocation_result() == "0-3");
  CHECK(parsed.envs().at("QRM_CPUS") == "0-3");
  CHECK(parsed.annotations().at("k") == "v");
  REQUIRE(parsed.resource_hints().hints_size() == 1);
  CHECK(parsed.resource_hints().hints(0).nodes_size() == 1);
  CHECK(parsed.resource_hints().hints(0).nodes(0) == 0);
  CHECK(parsed.resource_hints().hints(0).preferred());
  CHECK(parsed.topology_assignments().at(1) == 4);
  REQUIRE(parsed.mounts_size() == 1);
  CHECK(parsed.mounts(0).read_only());
  REQUIRE(parsed.devices_size() == 1);
  CHECK(parsed.devices(0).permissions() == "rw");
}

TEST_CASE("resourceplugin RegisterRequest", "[api][resourceplugin]") {
  rp::RegisterRequest req;
  req.set_version("v1alpha1");
  req.set_endpoint("qrm-cpu.sock");
  req.set_resource_name("cpu");
  req.mutable_options()->set_pre_start_required(true);
  req.mutable_options()->set_with_topology_alignment(true);
  req.mutable_options()->add_associated_devices("nvidia.com/gpu");

  const std::string golden = Wire(
      "0a 08 'v1alpha1'"      // field 1 (version)
      "12 0c 'qrm-cpu.sock'"  // field 2 (endpoint), relative to the plugin directory
      "1a 03 'cpu'"           // field 3 (resource_name)
      // field 4 (options) ResourcePluginOptions 20 bytes: pre_start_required(1),
      // with_topology_alignment(2), associated_devices(4) tag 0x22
      "22 14  08 01  10 01  22 0e 'nvidia.com/gpu'");
  CHECK(ToHex(Serialize(req)) == ToHex(golden));

  rp::RegisterRequest parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.version() == "v1alpha1");
  CHECK(parsed.endpoint() == "qrm-cpu.sock");
  CHECK(parsed.resource_name() == "cpu");
  CHECK(parsed.options().pre_start_required());
  CHECK(parsed.options().with_topology_alignment());
  CHECK_FALSE(parsed.options().need_reconcile());
  REQUIRE(parsed.options().associated_devices_size() == 1);
  CHECK(parsed.options().associated_devices(0) == "nvidia.com/gpu");
}

TEST_CASE("resourceplugin hints: empty list is distinct from absent", "[api][resourceplugin]") {
  rp::ResourceHintsResponse resp;
  resp.set_pod_uid("p1");
  resp.set_resource_name("cpu");
  auto& cpu = (*resp.mutable_resource_hints())["cpu"];
  auto* h1 = cpu.add_hints();
  h1->add_nodes(0);
  h1->set_preferred(true);
  auto* h2 = cpu.add_hints();
  h2->add_nodes(0);
  h2->add_nodes(1);
  (*resp.mutable_resource_hints())["memory"];  // present but empty: cannot be satisfied

  const std::string golden = Wire(
      "0a 02 'p1'"   // field 1 (pod_uid)
      "4a 03 'cpu'"  // field 9 (resource_name)
      // field 10 (resource_hints) tag 0x52, entry 20 bytes: key "cpu", value(2)
      // ListOfTopologyHints 13 bytes = {nodes [0], preferred} {nodes [0,1]}
      "52 14  0a 03 'cpu'  12 0d  0a 05 0a 01 00 10 01  0a 04 0a 02 00 01"
      // entry 10 bytes: key "memory", value(2) an empty ListOfTopologyHints
      "52 0a  0a 06 'memory'  12 00");
  CHECK(ToHex(Serialize(resp)) == ToHex(golden));

  rp::ResourceHintsResponse parsed;
  REQUIRE(parsed.ParseFromString(golden));
  REQUIRE(parsed.resource_hints().count("cpu") == 1);
  CHECK(parsed.resource_hints().at("cpu").hints_size() == 2);
  CHECK_FALSE(parsed.resource_hints().at("cpu").hints(1).preferred());
  REQUIRE(parsed.resource_hints().count("memory") == 1);
  CHECK(parsed.resource_hints().at("memory").hints_size() == 0);
  CHECK(parsed.resource_hints().count("gpu") == 0);

  // An entry whose value is omitted on the wire still yields a present, empty list.
  rp::ResourceHintsResponse no_value;
  REQUIRE(no_value.ParseFromString(Wire("52 08  0a 06 'memory'")));
  REQUIRE(no_value.resource_hints().count("memory") == 1);
  CHECK(no_value.resource_hints().at("memory").hints_size() == 0);
}
