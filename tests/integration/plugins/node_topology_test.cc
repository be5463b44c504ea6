// The NodeResourceTopology qrm-advisor builds from what qrm-host's admin API answers, with the
// real CPU and memory plugins behind it: what each zone has available (a shared container
// holds its request, not the pool the CPU plugin names) and who is NUMA-bound there, which the
// drain planner reads (cluster/drain/numa_state.h).
#include <set>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include "advisor/report/nrt_builder.h"
#include "api/admin_v1.grpc.pb.h"
#include "qrm/admin/admin_server.h"
#include "tests/integration/plugins/doc_machine_fixture.h"

namespace qrm::host::testing {
namespace {

namespace adm = ::qrm::admin::v1;

std::string Available(const cluster::NrtZone& zone, const std::string& resource) {
  for (const cluster::NrtResourceInfo& r : zone.resources) {
    if (r.name == resource) return r.available.ToString();
  }
  return "absent";
}

std::string Attribute(const cluster::NrtZone& zone, const std::string& name) {
  for (const cluster::NrtAttribute& a : zone.attributes) {
    if (a.name == name) return a.value;
  }
  return "absent";
}

TEST_CASE("the NRT from the real plugins: shared pods hold their requests, bound pods their zone") {
  DocMachineFixture f;
  HostOptions options = f.DocOptions();
  options.admission.policy = topology::Policy::kSingleNumaNode;
  Host& host = f.StartHost(options);
  f.StartRealPlugin("cpu", {"--reserved-cpus", "0-1,40-41", "--reclaimed-pool-size", "4"});
  f.StartRealPlugin("memory");
  REQUIRE(f.WaitRegistered("cpu"));
  REQUIRE(f.WaitRegistered("memory"));
  const std::pair<const char*, std::map<std::string, double>> pods[] = {
      {"online-micro_service", {{"cpu", 4}}},
      {"online-micro_service", {{"cpu", 2}}},
      {"storage-service", {{"cpu", 10}, {"memory", 20 * kGiB}}},  // bound to node 0
      {"exclusive-store", {{"cpu", 4}, {"memory", 10 * kGiB}}},   // node 1, all of its CPUs
  };
  std::set<std::string> uids;
  for (const auto& [role, resources] : pods) {
    const std::string uid = "00000000-0000-4000-8000-00000000000" + std::to_string(uids.size());
    auto r =
        host.admission().Admit(DocPod(uid, "pod" + std::to_string(uids.size()), role, resources));
    INFO(role << ": " << r.status().ToString());
    REQUIRE(r.ok());
    uids.insert(uid);
  }
  // The shared pods were admitted while the pool spanned both nodes: one reconcile brings the
  // host's record of them (what ListAllocations answers) to the pool as it is now.
  f.view().Set(uids);
  REQUIRE(host.reconciler().RunOnce().ok());

  admin::AdminServer admin(admin::AdminOptions{f.File("admin.sock"), {}}, host);
  REQUIRE(admin.Start().ok());
  auto stub = adm::Admin::NewStub(
      grpc::CreateChannel("unix://" + f.File("admin.sock"), grpc::InsecureChannelCredentials()));
  adm::GetAllocatableResponse allocatable;
  adm::ListAllocationsResponse allocations;
  {
    grpc::ClientContext ctx;
    REQUIRE(stub->GetAllocatable(&ctx, {}, &allocatable).ok());
  }
  {
    grpc::ClientContext ctx;
    REQUIRE(stub->ListAllocations(&ctx, {}, &allocations).ok());
  }
  auto nrt = advisor::BuildNodeResourceTopology("doc80", allocatable, allocations);
  REQUIRE(nrt.ok());
  REQUIRE(nrt->zones.size() == 2);
  const cluster::NrtZone& z0 = nrt->zones[0];
  const cluster::NrtZone& z1 = nrt->zones[1];
  // Node 0: 38 allocatable CPUs, 10 dedicated to storage-service, and the shared pool now
  // lies only here, holding the two shared pods' 6 requested CPUs.
  CHECK(Available(z0, "cpu") == "22");
  CHECK(Attribute(z0, "qrm.io/numa-bound-pods") == "1");
  CHECK(Attribute(z0, "qrm.io/numa-exclusive") == "false");
  CHECK(Attribute(z0, "qrm.io/dedicated-cpu") == "10");
  CHECK(Attribute(z0, "qrm.io/numa-bound-roles") == "storage-service");
  // Node 1: the exclusive pod took every allocatable CPU of it.
  CHECK(Available(z1, "cpu") == "0");
  CHECK(Attribute(z1, "qrm.io/numa-bound-pods") == "1");
  CHECK(Attribute(z1, "qrm.io/numa-exclusive") == "true");
  CHECK(Attribute(z1, "qrm.io/dedicated-cpu") == "38");
  CHECK(Attribute(z1, "qrm.io/numa-bound-roles") == "exclusive-store");
  // The admin API carries what the builder needed.
  bool saw_exclusive = false;
  for (const adm::PodAllocation& pod : allocations.pods()) {
    for (const adm::ContainerAllocation& c : pod.containers()) {
      if (c.pod_role() != "exclusive-store") continue;
      saw_exclusive = true;
      CHECK(c.numa_binding());
      CHECK(c.numa_exclusive());
      CHECK(c.requests().at("cpu") == 4);
    }
  }
  CHECK(saw_exclusive);
}

}  // namespace
}  // namespace qrm::host::testing
