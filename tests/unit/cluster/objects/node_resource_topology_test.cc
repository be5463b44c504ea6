// NodeResourceTopology v1alpha2 JSON against a golden file written from the upstream Go types.
#include "cluster/objects/node_resource_topology.h"

#include <catch2/catch.hpp>

#include "tests/unit/cluster/objects/golden_json.h"

namespace qrm::cluster {
namespace {

TEST_CASE("a NodeResourceTopology round-trips byte for byte through the golden file") {
  const std::string golden = Golden("noderesourcetopology.json");
  auto nrt = DecodeNodeResourceTopology(golden);
  REQUIRE(nrt.ok());
  REQUIRE(nrt->zones.size() == 2);
  CHECK(nrt->zones[0].name == "node-0");
  CHECK(nrt->zones[0].type == kNumaZoneType);
  CHECK(nrt->zones[0].costs[1].value == 21);
  CHECK(nrt->zones[0].resources[1].available.Value() == 40LL << 30);
  CHECK(nrt->zones[0].resources[2].name == "qrm.io/nic");
  CHECK(nrt->attributes[0].name == kTopologyManagerPolicyAttribute);
  CHECK(EncodeNodeResourceTopology(*nrt) == Compact(golden));
}

TEST_CASE("NUMA zone names are node-<id>") {
  CHECK(NumaZoneName(3) == "node-3");
  CHECK(*NumaZoneId("node-12") == 12);
  for (const char* bad : {"node-", "node--1", "numa-0", "node-1a", ""}) {
    INFO(bad);
    CHECK_FALSE(NumaZoneId(bad).ok());
  }
}

TEST_CASE("a topology with no zones is written with zones null as Go writes a nil list") {
  NodeResourceTopology nrt;
  nrt.metadata.name = "n";
  CHECK(EncodeNodeResourceTopology(nrt) ==
        R"({"kind":"NodeResourceTopology","apiVersion":"topology.node.k8s.io/v1alpha2",)"
        R"("metadata":{"name":"n","creationTimestamp":null},"zones":null})");
}

TEST_CASE("bad NodeResourceTopology JSON is refused naming the field and the value") {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"zones":[{"name":"node-0","resources":[{"name":"cpu","capacity":"4","allocatable":"8","available":"1"}]}]})",
       "zones[0].resources[0]: resource \"cpu\": capacity 4, allocatable 8"},
      {R"({"zones":[{"name":"node-0","resources":[{"name":"cpu","capacity":"-4"}]}]})",
       "zones[0].resources[0].capacity: \"-4\" is negative"},
      {R"({"zones":[{"name":"node-0","costs":[{"name":"node-1","value":"far"}]}]})",
       "zones[0].costs[0].value: a string where an integer belongs"},
      {R"({"zones":{}})", "zones: an object where an array belongs"},
      {R"({"apiVersion":"topology.node.k8s.io/v1alpha1"})",
       "apiVersion: \"topology.node.k8s.io/v1alpha1\""},
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    auto nrt = DecodeNodeResourceTopology(text);
    REQUIRE_FALSE(nrt.ok());
    CHECK_THAT(nrt.status().message(), Catch::Contains(want));
  }
}

}  // namespace
}  // namespace qrm::cluster
