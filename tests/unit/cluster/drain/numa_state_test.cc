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

std::vector<cluster::NrtAttribute> Binding(std::string pods, std::string exclusive,
                                           std::string cpu) {
  return {{"qrm.io/numa-bound-pods", std::move(pods)},
          {"qrm.io/numa-exclusive", std::move(exclusive)},
          {"qrm.io/dedicated-cpu", std::move(cpu)}};
}

TEST_CASE("qrm's zone attributes say who is NUMA-bound on each zone") {
  NodeResourceTopology nrt = TwoZones();
  nrt.zones[0].attributes = Binding("2", "false", "4500m");
  nrt.zones[1].attributes = Binding("1", "true", "8");
  auto state = NumaNodeStateFromNrt(nrt);
  REQUIRE(state.ok());
  CHECK(state->zones[0].binding == ZoneBinding{true, 2, false, 4500});
  CHECK(state->zones[1].binding == ZoneBinding{true, 1, true, 8000});
  SECTION("the roles of the bound pods, sorted; absent (an older qrm-advisor) is none") {
    nrt.zones[0].attributes.push_back({"qrm.io/numa-bound-roles", "storage-service,reranker"});
    auto roles = NumaNodeStateFromNrt(nrt);
    REQUIRE(roles.ok());
    CHECK(roles->zones[0].binding.roles == std::vector<std::string>{"reranker", "storage-service"});
    CHECK(roles->zones[1].binding.roles.empty());
    nrt.zones[0].attributes.back().value = "reranker,,x";
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("zone 0: attribute qrm.io/numa-bound-roles: "
                                             "\"reranker,,x\" has an empty role"));
  }
  SECTION("a zone without them (another writer's NRT) has an unknown binding") {
    nrt.zones[1].attributes.clear();
    auto unknown = NumaNodeStateFromNrt(nrt);
    REQUIRE(unknown.ok());
    CHECK(unknown->zones[1].binding == ZoneBinding{});
  }
}

TEST_CASE("bad zone attributes name the node, zone, attribute and value") {
  NodeResourceTopology nrt = TwoZones();
  nrt.zones[0].attributes = Binding("0", "false", "0");
  auto& attributes = nrt.zones[1].attributes;
  attributes = Binding("1", "true", "2");
  SECTION("one missing") {
    attributes.pop_back();
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("worker-1 NUMA zone 1: attribute "
                                             "qrm.io/dedicated-cpu: missing"));
  }
  SECTION("listed twice") {
    attributes.push_back(attributes[0]);
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("zone 1: attribute qrm.io/numa-bound-pods is "
                                             "listed twice"));
  }
  SECTION("another writer's attributes are its own, even twice") {
    attributes.push_back({"vendor.example/tier", "a"});
    attributes.push_back({"vendor.example/tier", "b"});
    CHECK(NumaNodeStateFromNrt(nrt).ok());
  }
  SECTION("a pod count that is not one") {
    for (const char* bad : {"-1", "1.5", "", "two", "3 ", "1000001"}) {
      attributes[0].value = bad;
      CHECK_THAT(ErrorOf(nrt), Catch::Contains("qrm.io/numa-bound-pods: \"" + std::string(bad) +
                                               "\" is not a pod count"));
    }
  }
  SECTION("exclusive neither true nor false") {
    attributes[1].value = "yes";
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("qrm.io/numa-exclusive: \"yes\""));
  }
  SECTION("a CPU amount that is no quantity, or negative") {
    attributes[2].value = "4 cores";
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("qrm.io/dedicated-cpu") && Catch::Contains("4 cores"));
    attributes[2].value = "-2";
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("qrm.io/dedicated-cpu: \"-2\" is not a CPU amount"));
    attributes[2].value = "2000000000k";
    CHECK_THAT(ErrorOf(nrt), Catch::Contains("is not a CPU amount (0 to 1099511627776m)"));
  }
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
