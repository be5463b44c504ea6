// NumaNodeState from a NodeResourceTopology as qrm-advisor writes it, and the errors that name
// the node and field of inconsistent input.
#include "cluster/drain/numa_state.h"

#include <catch2/catch.hpp>

namespace qrm::cluster::drain {
namespace {

using cluster::NodeResourceTopology;
using cluster::NrtResourceInfo;
using cluster::NrtZone;

NrtResourceInfo Cpu(int64_t capacity_milli, int64_t available_milli) {
  return {"cpu", Quantity::FromMilli(capacity_milli), Quantity::FromMilli(capacity_milli),
          Quantity::FromMilli(available_milli)};
}

NrtResourceInfo Bytes(const std::string& name, int64_t capacity, int64_t available) {
  return {name, Quantity::FromInt(capacity), Quantity::FromInt(capacity),
          Quantity::FromInt(available)};
}

NrtZone Zone(int id, std::vector<NrtResourceInfo> resources) {
  NrtZone z;
  z.name = cluster::NumaZoneName(id);
  z.type = cluster::kNumaZoneType;
  z.resources = std::move(resources);
  return z;
}

NodeResourceTopology TwoZones() {
  NodeResourceTopology nrt;
  nrt.metadata.name = "worker-1";
  nrt.zones.push_back(Zone(
      0, {Cpu(8000, 3500), Bytes("memory", 32LL << 30, 20LL << 30), Bytes("qrm.io/nic", 2, 1)}));
  nrt.zones.push_back(Zone(1, {Cpu(8000, 8000), Bytes("memory", 32LL << 30, 32LL << 30)}));
  nrt.zones[0].costs = {{"node-0", 10}, {"node-1", 21}};
  nrt.zones[1].costs = {{"node-0", 21}, {"node-1", 10}};
  nrt.attributes = {{cluster::kTopologyManagerPolicyAttribute, "single-numa-node"},
                    {cluster::kTopologyManagerScopeAttribute, "pod"}};
  return nrt;
}

std::string ErrorOf(const NodeResourceTopology& nrt) {
  auto state = NumaNodeStateFromNrt(nrt);
  REQUIRE_FALSE(state.ok());
  CHECK(state.status().code() == StatusCode::kInvalidArgument);
  return state.status().message();
}

TEST_CASE("a NodeResourceTopology gives each NUMA zone's free and total amounts") {
  auto state = NumaNodeStateFromNrt(TwoZones());
  REQUIRE(state.ok());
  CHECK(state->node == "worker-1");
  CHECK(state->policy == topology::Policy::kSingleNumaNode);
  CHECK(state->scope == topology::Scope::kPod);
  REQUIRE(state->zones.size() == 2);
  CHECK(state->zones[0].cpu_milli == ResourceAmount{3500, 8000});
  CHECK(state->zones[0].memory_bytes == ResourceAmount{20LL << 30, 32LL << 30});
  CHECK(state->zones[0].extended.at("qrm.io/nic") == ResourceAmount{1, 2});
  CHECK(ZoneAmount(state->zones[1], "qrm.io/nic") == ResourceAmount{});
  CHECK(state->AllZones() == NumaMask::FromBits(0b11));
  REQUIRE(state->numa_info->has_distances());
  CHECK(state->numa_info->Distance(0, 1) == 21);
}

TEST_CASE("zones that are not NUMA nodes are ignored and missing attributes take the defaults") {
  NodeResourceTopology nrt = TwoZones();
  nrt.attributes.clear();
  nrt.zones[1].costs.clear();
  NrtZone socket;
  socket.name = "socket-0";
  socket.type = "Socket";
  nrt.zones.push_back(socket);
  auto state = NumaNodeStateFromNrt(nrt);
  REQUIRE(state.ok());
  CHECK(state->zones.size() == 2);
  CHECK(state->policy == topology::Policy::kNone);
  CHECK(state->scope == topology::Scope::kContainer);
  CHECK_FALSE(state->numa_info->has_distances());
}

TEST_CASE("the decoded JSON of an NRT object gives the same state") {
  auto nrt = cluster::DecodeNodeResourceTopology(cluster::EncodeNodeResourceTopology(TwoZones()));
  REQUIRE(nrt.ok());
  auto state = NumaNodeStateFromNrt(*nrt);
  REQUIRE(state.ok());
  CHECK(state->zones[0].cpu_milli.free == 3500);
  CHECK(state->zones[1].memory_bytes.free == 32LL << 30);
}

TEST_CASE("NRT errors name the node and the field") {
  NodeResourceTopology nrt = TwoZones();
  SECTION("available above capacity") {
    nrt.zones[1].resources[0].available = Quantity::FromMilli(9000);
    const std::string message = ErrorOf(nrt);
    CHECK_THAT(message, Catch::Contains("worker-1") && Catch::Contains("zone 1") &&
                            Catch::Contains("cpu") && Catch::Contains("above capacity 8000"));
  }
  SECTION("negative amount") {
    nrt.zones[0].resources[1].available = Quantity::FromInt(-1);
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("worker-1") && Catch::Contains("memory") &&
                                 Catch::Contains("negative"));
  }
  SECTION("unknown policy") {
    nrt.attributes[0].value = "strict";
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("worker-1") &&
                                 Catch::Contains("topologyManagerPolicy") &&
                                 Catch::Contains("strict"));
  }
  SECTION("unknown scope") {
    nrt.attributes[1].value = "node";
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("topologyManagerScope") && Catch::Contains("node"));
  }
  SECTION("zone name") {
    nrt.zones[1].name = "numa-1";
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("worker-1") && Catch::Contains("numa-1"));
  }
  SECTION("duplicate zone") {
    nrt.zones[1].name = "node-0";
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("NUMA zone 0 is listed twice"));
  }
  SECTION("duplicate resource") {
    nrt.zones[1].resources.push_back(Cpu(1000, 1000));
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("zone 1: resource cpu is listed twice"));
  }
  SECTION("no NUMA zone") {
    nrt.zones.clear();
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("worker-1: no NUMA zone"));
  }
}

TEST_CASE("a copied state is a fork: changing it leaves the original as it was") {
  auto state = NumaNodeStateFromNrt(TwoZones());
  REQUIRE(state.ok());
  NumaNodeState fork = *state;
  fork.Zone(1)->cpu_milli.free -= 1000;
  CHECK(fork.Zone(1)->cpu_milli.free == 7000);
  CHECK(state->Zone(1)->cpu_milli.free == 8000);
  CHECK(fork.numa_info == state->numa_info);
  CHECK(state->Zone(7) == nullptr);
}

}  // namespace
}  // namespace qrm::cluster::drain
