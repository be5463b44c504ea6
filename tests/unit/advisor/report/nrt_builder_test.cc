// The NodeResourceTopology from qrm-host's answers: zones per NUMA node, what the containers
// hold taken off each zone's allocatable, the topology manager's policy and scope.
#include "advisor/report/nrt_builder.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

namespace adm = ::qrm::admin::v1;
namespace rp = ::resourceplugin::v1alpha1;

void Add(google::protobuf::RepeatedPtrField<rp::TopologyAwareQuantity>* list, uint64_t node,
         double value) {
  rp::TopologyAwareQuantity* q = list->Add();
  q->set_node(node);
  q->set_resource_value(value);
  q->set_topology_level(rp::NUMA);
}

// Two NUMA nodes of 16 CPUs (2 reserved on node 0) and 32 GiB, distances 10/21.
adm::GetAllocatableResponse TwoNodes() {
  adm::GetAllocatableResponse a;
  a.set_topology_policy("single-numa-node");
  a.set_topology_scope("container");
  for (uint32_t id : {0u, 1u}) {
    adm::NumaNode* n = a.add_numa_nodes();
    n->set_id(id);
    (*n->mutable_distances())[0] = id == 0 ? 10 : 21;
    (*n->mutable_distances())[1] = id == 0 ? 21 : 10;
  }
  rp::AllocatableTopologyAwareResource& cpu = (*a.mutable_resources())["cpu"];
  Add(cpu.mutable_topology_aware_capacity_quantity_list(), 0, 16);
  Add(cpu.mutable_topology_aware_capacity_quantity_list(), 1, 16);
  Add(cpu.mutable_topology_aware_allocatable_quantity_list(), 0, 14);
  Add(cpu.mutable_topology_aware_allocatable_quantity_list(), 1, 16);
  rp::AllocatableTopologyAwareResource& mem = (*a.mutable_resources())["memory"];
  for (uint64_t n : {0u, 1u}) {
    Add(mem.mutable_topology_aware_capacity_quantity_list(), n, 32.0 * (1ULL << 30));
    Add(mem.mutable_topology_aware_allocatable_quantity_list(), n, 32.0 * (1ULL << 30));
  }
  return a;
}

// One pod with one container holding `quantity` of `resource` (a dedicated_cores container
// unless said otherwise: its allocation is what it holds).
rp::ResourceAllocationInfo& Use(adm::ListAllocationsResponse& l, const std::string& resource,
                                double quantity, const std::string& qos = "dedicated_cores") {
  adm::PodAllocation* pod = l.add_pods();
  pod->set_uid("uid-" + std::to_string(l.pods_size()));
  adm::ContainerAllocation* c = pod->add_containers();
  c->set_name("c");
  c->set_qos_level(qos);
  rp::ResourceAllocationInfo& info = (*c->mutable_resources())[resource];
  info.set_allocated_quantity(quantity);
  return info;
}

adm::ContainerAllocation& LastContainer(adm::ListAllocationsResponse& l) {
  return *l.mutable_pods(l.pods_size() - 1)->mutable_containers(0);
}

std::string Attr(const cluster::NrtZone& z, const std::string& name) {
  for (const cluster::NrtAttribute& a : z.attributes) {
    if (a.name == name) return a.value;
  }
  return "absent";
}

std::string At(const cluster::NrtZone& z, const std::string& resource, int which) {
  for (const cluster::NrtResourceInfo& r : z.resources) {
    if (r.name != resource) continue;
    const Quantity& q = which == 0 ? r.capacity : which == 1 ? r.allocatable : r.available;
    return q.ToString();
  }
  return "absent";
}

TEST_CASE("each NUMA node is a zone with capacity allocatable and available") {
  adm::ListAllocationsResponse l;
  // 4 dedicated CPUs on node 1 (exact assignment), 8 GiB placed by its hint on node 0, and a
  // shared container's request of 3 CPUs with no placement: split over both nodes.
  (*Use(l, "cpu", 4).mutable_topology_assignments())[1] = 4;
  Use(l, "memory", 8.0 * (1ULL << 30)).mutable_resource_hints()->add_hints()->add_nodes(0);
  Use(l, "cpu", 3, "shared_cores");
  (*LastContainer(l).mutable_requests())["cpu"] = 3;
  auto nrt = BuildNodeResourceTopology("node-a", TwoNodes(), l);
  REQUIRE(nrt.ok());
  CHECK(nrt->metadata.name == "node-a");
  REQUIRE(nrt->zones.size() == 2);
  const cluster::NrtZone& z0 = nrt->zones[0];
  CHECK(z0.name == "node-0");
  CHECK(z0.type == "Node");
  REQUIRE(z0.costs.size() == 2);
  CHECK(z0.costs[1].name == "node-1");
  CHECK(z0.costs[1].value == 21);
  CHECK(At(z0, "cpu", 0) == "16");
  CHECK(At(z0, "cpu", 1) == "14");
  CHECK(At(z0, "cpu", 2) == "12500m");  // 14 - 1.5
  CHECK(At(z0, "memory", 2) == "24Gi");
  const cluster::NrtZone& z1 = nrt->zones[1];
  CHECK(At(z1, "cpu", 2) == "10500m");  // 16 - 4 - 1.5
  CHECK(At(z1, "memory", 2) == "32Gi");
  REQUIRE(nrt->attributes.size() == 2);
  CHECK(nrt->attributes[0].name == "topologyManagerPolicy");
  CHECK(nrt->attributes[0].value == "single-numa-node");
  CHECK(nrt->attributes[1].value == "container");
}

TEST_CASE("a container of a shared pool holds its request, spread as the pool is") {
  adm::ListAllocationsResponse l;
  // The CPU plugin names the whole shared pool (28 CPUs: 10 on node 0, 18 on node 1) as each
  // shared container's allocation; each holds its request of it, in the pool's proportions.
  for (double request : {2.8, 1.4}) {
    rp::ResourceAllocationInfo& info = Use(l, "cpu", 28, "shared_cores");
    (*info.mutable_topology_assignments())[0] = 10;
    (*info.mutable_topology_assignments())[1] = 18;
    (*LastContainer(l).mutable_requests())["cpu"] = request;
  }
  // A reclaimed container without a CPU request holds none of its pool.
  (*Use(l, "cpu", 4, "reclaimed_cores").mutable_topology_assignments())[1] = 4;
  auto nrt = BuildNodeResourceTopology("node-a", TwoNodes(), l);
  REQUIRE(nrt.ok());
  CHECK(At(nrt->zones[0], "cpu", 2) == "12500m");  // 14 - (2.8 + 1.4) x 10/28
  CHECK(At(nrt->zones[1], "cpu", 2) == "13300m");  // 16 - (2.8 + 1.4) x 18/28
  CHECK(Attr(nrt->zones[0], "qrm.io/dedicated-cpu") == "0");
}

TEST_CASE("each zone says how many pods are NUMA-bound there, exclusively or not") {
  adm::ListAllocationsResponse l;
  // A NUMA-bound dedicated container on node 0 (its hint), with its memory there too.
  rp::ResourceAllocationInfo& cpu = Use(l, "cpu", 4);
  cpu.mutable_resource_hints()->add_hints()->add_nodes(0);
  (*cpu.mutable_topology_assignments())[0] = 4;
  LastContainer(l).set_numa_binding(true);
  LastContainer(l).set_pod_role("storage-service");
  rp::ResourceAllocationInfo& mem = (*LastContainer(l).mutable_resources())["memory"];
  mem.set_allocated_quantity(1 << 30);
  mem.mutable_resource_hints()->add_hints()->add_nodes(0);
  // A NUMA-bound shared_cores pod on node 0 (memory only) and an exclusive one on node 1,
  // which the CPU plugin gives every CPU of the node.
  Use(l, "memory", 1 << 30, "shared_cores").mutable_resource_hints()->add_hints()->add_nodes(0);
  LastContainer(l).set_numa_binding(true);
  LastContainer(l).set_pod_role("cache");
  rp::ResourceAllocationInfo& whole = Use(l, "cpu", 16);
  whole.mutable_resource_hints()->add_hints()->add_nodes(1);
  (*whole.mutable_topology_assignments())[1] = 16;
  LastContainer(l).set_numa_binding(true);
  LastContainer(l).set_numa_exclusive(true);
  // An unbound dedicated container: its CPUs count, it binds nothing.
  (*Use(l, "cpu", 2).mutable_topology_assignments())[0] = 2;
  auto nrt = BuildNodeResourceTopology("node-a", TwoNodes(), l);
  REQUIRE(nrt.ok());
  const cluster::NrtZone& z0 = nrt->zones[0];
  CHECK(Attr(z0, "qrm.io/numa-bound-pods") == "2");
  CHECK(Attr(z0, "qrm.io/numa-exclusive") == "false");
  CHECK(Attr(z0, "qrm.io/dedicated-cpu") == "6");
  CHECK(Attr(z0, "qrm.io/numa-bound-roles") == "cache,storage-service");
  CHECK(At(z0, "cpu", 2) == "8");  // 14 - 6
  const cluster::NrtZone& z1 = nrt->zones[1];
  CHECK(Attr(z1, "qrm.io/numa-bound-pods") == "1");
  CHECK(Attr(z1, "qrm.io/numa-exclusive") == "true");
  CHECK(Attr(z1, "qrm.io/dedicated-cpu") == "16");
  CHECK(Attr(z1, "qrm.io/numa-bound-roles") == "");
  CHECK(At(z1, "cpu", 2) == "0");
}

TEST_CASE("a zone nobody holds says so") {
  auto nrt = BuildNodeResourceTopology("node-a", TwoNodes(), {});
  REQUIRE(nrt.ok());
  for (const cluster::NrtZone& z : nrt->zones) {
    REQUIRE(z.attributes.size() == 4);
    CHECK(Attr(z, "qrm.io/numa-bound-pods") == "0");
    CHECK(Attr(z, "qrm.io/numa-exclusive") == "false");
    CHECK(Attr(z, "qrm.io/dedicated-cpu") == "0");
    CHECK(Attr(z, "qrm.io/numa-bound-roles") == "");
  }
}

TEST_CASE("more held than allocatable shows nothing available and never a negative") {
  adm::ListAllocationsResponse l;
  (*Use(l, "cpu", 20).mutable_topology_assignments())[0] = 20;
  auto nrt = BuildNodeResourceTopology("node-a", TwoNodes(), l);
  REQUIRE(nrt.ok());
  CHECK(At(nrt->zones[0], "cpu", 2) == "0");
}

TEST_CASE("a quantity on a NUMA node the machine does not have is refused") {
  adm::GetAllocatableResponse a = TwoNodes();
  Add((*a.mutable_resources())["qrm.io/nic"].mutable_topology_aware_allocatable_quantity_list(), 5,
      1);
  auto nrt = BuildNodeResourceTopology("node-a", a, {});
  REQUIRE_FALSE(nrt.ok());
  CHECK(nrt.status().code() == StatusCode::kDataLoss);
  CHECK_THAT(nrt.status().message(), Catch::Contains("resource qrm.io/nic on NUMA node 5"));
}

TEST_CASE("plugin amounts become quantities in each resource's unit") {
  CHECK(ResourceQuantity("cpu", 2.5).ToString() == "2500m");
  CHECK(ResourceQuantity("memory", 1073741824).ToString() == "1Gi");
  CHECK(ResourceQuantity("hugepages-2Mi", 4194304).ToString() == "4Mi");
  CHECK(ResourceQuantity("qrm.io/nic", 25000000000.0).ToString() == "25G");
  CHECK(ResourceQuantity("example.com/widget", 1.5).ToString() == "1500m");
  CHECK(ResourceQuantity("example.com/widget", -1).ToString() == "0");
}

}  // namespace
}  // namespace qrm::advisor
