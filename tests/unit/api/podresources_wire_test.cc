// Golden-bytes tests for api/podresources_v1.proto (package v1).
// tag = (field_number << 3) | wire_type; repeated int64 is packed (one len-delimited field).

#include <catch2/catch.hpp>

#include "api/podresources_v1.grpc.pb.h"
#include "api/podresources_v1.pb.h"
#include "tests/unit/api/wire_util.h"

using qrm::test::Serialize;
using qrm::test::ToHex;
using qrm::test::Wire;

TEST_CASE("podresources ListPodResourcesResponse with cpus and a NUMA-local device",
          "[api][podresources]") {
  v1::ListPodResourcesResponse resp;
  auto* pod = resp.add_pod_resources();
  pod->set_name("web");
  pod->set_namespace_("default");
  auto* ctr = pod->add_containers();
  ctr->set_name("app");
  auto* dev = ctr->add_devices();
  dev->set_resource_name("nic");
  dev->add_device_ids("eth1");
  dev->mutable_topology()->add_nodes()->set_id(1);
  ctr->add_cpu_ids(2);
  ctr->add_cpu_ids(3);

  const std::string golden = Wire(
      // field 1 (pod_resources) PodResources, 44 bytes:
      "0a 2c"
      "  0a 03 'web'"      // PodResources field 1 (name)
      "  12 07 'default'"  // PodResources field 2 (namespace)
      // PodResources field 3 (containers) ContainerResources, 28 bytes:
      "  1a 1c"
      "    0a 03 'app'"  // ContainerResources field 1 (name)
      // ContainerResources field 2 (devices) ContainerDevices, 17 bytes: resource_name(1),
      // device_ids(2), topology(3) -> TopologyInfo.nodes(1) -> NUMANode.ID(1) varint 1
      "    12 11  0a 03 'nic'  12 04 'eth1'  1a 04 0a 02 08 01"
      "    1a 02 02 03"  // ContainerResources field 3 (cpu_ids) packed [2, 3]
  );
  CHECK(ToHex(Serialize(resp)) == ToHex(golden));

  v1::ListPodResourcesResponse parsed;
  REQUIRE(parsed.ParseFromString(golden));
  REQUIRE(parsed.pod_resources_size() == 1);
  const auto& p = parsed.pod_resources(0);
  CHECK(p.name() == "web");
  CHECK(p.namespace_() == "default");
  REQUIRE(p.containers_size() == 1);
  const auto& c = p.containers(0);
  CHECK(c.name() == "app");
  REQUIRE(c.cpu_ids_size() == 2);
  CHECK(c.cpu_ids(0) == 2);
  CHECK(c.cpu_ids(1) == 3);
  REQUIRE(c.devices_size() == 1);
  CHECK(c.devices(0).resource_name() == "nic");
  CHECK(c.devices(0).device_ids(0) == "eth1");
  REQUIRE(c.devices(0).topology().nodes_size() == 1);
  CHECK(c.devices(0).topology().nodes(0).id() == 1);
}

TEST_CASE("podresources AllocatableResourcesResponse with memory", "[api][podresources]") {
  v1::AllocatableResourcesResponse resp;
  for (int cpu = 0; cpu < 4; ++cpu) resp.add_cpu_ids(cpu);
  auto* mem = resp.add_memory();
  mem->set_memory_type("memory");
  mem->set_size(1ULL << 30);
  mem->mutable_topology()->add_nodes()->set_id(0);

  const std::string golden = Wire(
      "12 04 00 01 02 03"  // field 2 (cpu_ids) packed [0, 1, 2, 3]
      // field 3 (memory) ContainerMemory, 18 bytes:
      "1a 12"
      "  0a 06 'memory'"     // memory_type(1)
      "  10 80 80 80 80 04"  // size(2) varint 2^30
      "  1a 02  0a 00"       // topology(3) -> nodes(1): NUMANode{ID=0}, an empty message
  );
  CHECK(ToHex(Serialize(resp)) == ToHex(golden));

  v1::AllocatableResourcesResponse parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.devices_size() == 0);
  REQUIRE(parsed.cpu_ids_size() == 4);
  CHECK(parsed.cpu_ids(3) == 3);
  REQUIRE(parsed.memory_size() == 1);
  CHECK(parsed.memory(0).memory_type() == "memory");
  CHECK(parsed.memory(0).size() == (1ULL << 30));
  REQUIRE(parsed.memory(0).topology().nodes_size() == 1);
  CHECK(parsed.memory(0).topology().nodes(0).id() == 0);
}

TEST_CASE("podresources GetPodResourcesRequest", "[api][podresources]") {
  v1::GetPodResourcesRequest req;
  req.set_pod_name("web");
  req.set_pod_namespace("default");

  const std::string golden = Wire(
      "0a 03 'web'"      // field 1 (pod_name)
      "12 07 'default'"  // field 2 (pod_namespace)
  );
  CHECK(ToHex(Serialize(req)) == ToHex(golden));

  v1::GetPodResourcesRequest parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.pod_name() == "web");
  CHECK(parsed.pod_namespace() == "default");
}

TEST_CASE("podresources unpacked cpu_ids from an old encoder still parse", "[api][podresources]") {
  // Parsers must accept both packed and one-tag-per-element encodings of repeated scalars.
  v1::ContainerResources ctr;
  REQUIRE(ctr.ParseFromString(Wire("0a 01 'a'  18 02  18 03")));  // field 3 varint, twice
  REQUIRE(ctr.cpu_ids_size() == 2);
  CHECK(ctr.cpu_ids(0) == 2);
  CHECK(ctr.cpu_ids(1) == 3);
  // Re-encoded packed: field 3 len-delimited tag 0x1a.
  CHECK(ToHex(Serialize(ctr)) == ToHex(Wire("0a 01 'a'  1a 02 02 03")));
}

TEST_CASE("podresources fields added upstream in 2025-2026: pod-level cpu_ids/memory, share_id",
          "[api][podresources]") {
  v1::PodResources pod;
  pod.set_name("p");
  pod.add_cpu_ids(4);
  pod.add_cpu_ids(5);
  auto* memory = pod.add_memory();
  memory->set_memory_type("memory");
  memory->set_size(1);
  const std::string golden = Wire(
      "0a 01 'p'"                       // field 1 (name)
      "22 02 04 05"                     // field 4 (cpu_ids) packed [4, 5]
      "2a 0a  0a 06 'memory'  10 01");  // field 5 (memory) ContainerMemory{type, size 1}
  CHECK(ToHex(Serialize(pod)) == ToHex(golden));
  v1::PodResources parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.cpu_ids_size() == 2);
  REQUIRE(parsed.memory_size() == 1);
  CHECK(parsed.memory(0).size() == 1);

  // share_id is `optional`: an empty value set is still sent (field 5, length 0).
  v1::ClaimResource claim;
  claim.set_share_id("");
  CHECK(ToHex(Serialize(claim)) == ToHex(Wire("2a 00")));
  v1::ClaimResource unset;
  CHECK(Serialize(unset).empty());
}
