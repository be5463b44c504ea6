// The QRM design document's "Simulation: how QRM works", examples 1-3, reproduced with the
// real plugin processes on the document's machine and the host's admission API. Every
// expected value below is the document's.
#include <catch2/catch.hpp>

#include "qrm/admin/admin_server.h"
#include "qrm/podresources/conversion.h"
#include "testing/subprocess.h"
#include "tests/integration/plugins/doc_machine_fixture.h"

namespace qrm::host::testing {
namespace {

const std::string kPod1 = "054a696f-d176-488d-b228-d6046faaf67c";
const std::string kPod2 = "fe8d9c25-6fb4-4983-908f-08e39ebeafe7";
const std::string kPod3 = "26731da7-b283-488b-b232-cff611c914e1";

admission::AdmissionResult Admit(Host& host, const admission::ContainerRequest& request) {
  auto r = host.admission().Admit(request);
  INFO(request.pod_name << ": " << r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

double Quantity(const admission::AdmissionResult& r, const std::string& resource) {
  auto it = r.allocation.resources.find(resource);
  REQUIRE(it != r.allocation.resources.end());
  return it->second.allocated_quantity();
}

TEST_CASE("example 1: online and offline pools, resized at run time, pushed by one reconcile") {
  DocMachineFixture f;
  Host& host = f.StartHost(f.DocOptions());
  f.StartRealPlugin("cpu", {"--reclaimed-pool-size", "4"});
  f.StartRealPlugin("memory");
  f.StartRealPlugin("nic");
  REQUIRE(f.WaitRegistered("cpu"));

  admission::AdmissionResult pod1 =
      Admit(host, DocPod(kPod1, "pod1", "online-micro_service", {{"cpu", 4}}));
  CHECK(Owned(pod1, apply::OciProperty::kCpusetCpus) == "0-37,40-77");
  CHECK(Quantity(pod1, "cpu") == 76);
  admission::AdmissionResult pod2 = Admit(host, DocPod(kPod2, "pod2", "ETL", {{"cpu", 2}}));
  CHECK(Owned(pod2, apply::OciProperty::kCpusetCpus) == "38-39,78-79");
  CHECK(Quantity(pod2, "cpu") == 4);
  admission::AdmissionResult pod3 =
      Admit(host, DocPod(kPod3, "pod3", "online-micro_service", {{"cpu", 4}}));
  CHECK(Owned(pod3, apply::OciProperty::kCpusetCpus) == "0-37,40-77");

  f.view().Set({kPod1, kPod2, kPod3});  // the runtime runs the three pods
  // Nothing changed yet: a reconcile applies nothing.
  auto quiet = host.reconciler().RunOnce();
  REQUIRE(quiet.ok());
  CHECK(f.applier().calls().empty());

  // The QoS system resizes the pools through the CPU plugin's control interface.
  auto set = qrm::testing::RunProcess(
      {DocMachineFixture::Binary("cpu"), "--state-dir", f.File("state-cpu"), "--sysfs-root",
       f.fake().sysfs_root, "--procfs-root", f.fake().procfs_root, "--set-pools", "reclaimed=52"});
  INFO(set.output);
  REQUIRE(set.exit_code == 0);

  // The first reconcile that sees the change pushes it to all three containers at once.
  std::vector<RecordingApplier::Call> calls;
  REQUIRE(WaitFor([&] {
    f.applier().clear();
    auto stats = host.reconciler().RunOnce();
    calls = f.applier().calls();
    return stats.ok() && !calls.empty();
  }));
  std::map<std::string, std::string> cpusets;
  for (const auto& c : calls) {
    CHECK(c.container == "container0");
    cpusets[c.uid] = c.update.resources.cpuset_cpus();
  }
  CHECK(calls.size() == 3);
  CHECK(cpusets[kPod1] == "0-13,40-53");
  CHECK(cpusets[kPod2] == "14-39,54-79");
  CHECK(cpusets[kPod3] == "0-13,40-53");
  auto stored1 = host.state().GetContainer(kPod1, "container0");
  REQUIRE(stored1);
  CHECK(stored1->resources.at("cpu").allocated_quantity() == 28);
  CHECK(host.state().GetContainer(kPod2, "container0")->resources.at("cpu").allocated_quantity() ==
        52);

  f.applier().clear();
  REQUIRE(host.reconciler().RunOnce().ok());
  CHECK(f.applier().calls().empty());
}

TEST_CASE("example 2: NUMA-bound dedicated pods with role anti-affinity") {
  DocMachineFixture f;
  HostOptions options = f.DocOptions();
  options.admission.policy = topology::Policy::kSingleNumaNode;
  Host& host = f.StartHost(options);
  // As examples/configs: the document's pictures keep example 1's reclaimed pool.
  f.StartRealPlugin("cpu", {"--reserved-cpus", "0-1,40-41", "--reclaimed-pool-size", "4"});
  f.StartRealPlugin("memory", {"--reserved-memory", "500Mi"});
  REQUIRE(f.WaitRegistered("cpu"));
  REQUIRE(f.WaitRegistered("memory"));

  admission::AdmissionResult pod1 =
      Admit(host, DocPod("bc9e28df-1b5c-4099-8866-6110277184e0", "pod1", "storage-service",
                         {{"cpu", 20}, {"memory", 40 * kGiB}}));
  CHECK(Owned(pod1, apply::OciProperty::kCpusetCpus) == "2-21");
  CHECK(Owned(pod1, apply::OciProperty::kCpusetMems) == "0");
  CHECK(Quantity(pod1, "cpu") == 20);
  CHECK(pod1.allocation.request.hint().nodes_size() == 1);
  CHECK(pod1.allocation.request.hint().nodes(0) == 0);

  // Enough room is left on node 0, but reranker and storage-service are anti-affine.
  admission::AdmissionResult pod2 =
      Admit(host, DocPod("6f695526-b07c-4baa-90e3-af1dfed2faf8", "pod2", "reranker",
                         {{"cpu", 10}, {"memory", 20 * kGiB}}));
  CHECK(Owned(pod2, apply::OciProperty::kCpusetCpus) == "42-51");
  CHECK(Owned(pod2, apply::OciProperty::kCpusetMems) == "1");
  CHECK(Quantity(pod2, "cpu") == 10);

  // The memory plugin accounts per node: the document's allocatable figures minus the pods.
  // qrmctl draws the machine after example 2 (this picture is in the README).
  admin::AdminServer admin(admin::AdminOptions{f.File("admin.sock"), {}}, host);
  REQUIRE(admin.Start().ok());
  auto topology = qrm::testing::RunProcess({QRMCTL, "--admin-socket", f.File("admin.sock"),
                                            "--color", "never", "--sysfs-root", f.fake().sysfs_root,
                                            "--procfs-root", f.fake().procfs_root, "--netns-dir",
                                            f.fake().netns_dir, "topology"});
  INFO(topology.output);
  REQUIRE(topology.exit_code == 0);
  CHECK_THAT(topology.output,
             Catch::Contains("NUMA node 0  cpus 0-39") && Catch::Contains("0: [RR] [aa] [aa]") &&
                 Catch::Contains("40: [RR] [bb] [bb] [bb] [bb] [bb] [SS]") &&
                 Catch::Contains("[SS] [CC] \n") && Catch::Contains("a default/pod1") &&
                 Catch::Contains("b default/pod2"));
  qrm::testing::WriteFile(QRM_TOPOLOGY_SNAPSHOT, topology.output);

  auto allocatable = host.AggregateAllocatable();
  REQUIRE(allocatable.contains("memory"));
  std::map<uint64_t, double> per_node;
  for (const auto& q : allocatable.at("memory").topology_aware_allocatable_quantity_list()) {
    per_node[q.node()] = q.resource_value();
  }
  CHECK(per_node[0] == 237182648320.0);
  CHECK(per_node[1] == 237282263040.0);
}

TEST_CASE("example 3: pods sharing a NUMA node and its NIC in another network namespace") {
  DocMachineFixture f;
  HostOptions options = f.DocOptions();
  options.admission.policy = topology::Policy::kSingleNumaNode;
  options.admission.always_consult = {"qrm.io/nic"};
  Host& host = f.StartHost(options);
  // As examples/configs: the document's pictures keep example 1's reclaimed pool.
  f.StartRealPlugin("cpu", {"--reserved-cpus", "0-1,40-41", "--reclaimed-pool-size", "4"});
  f.StartRealPlugin("memory");
  f.StartRealPlugin("nic");
  REQUIRE(f.WaitRegistered("cpu"));
  REQUIRE(f.WaitRegistered("memory"));
  REQUIRE(f.WaitRegistered("qrm.io/nic"));

  // "All related resources in NUMA node0 have been allocated."
  admission::AdmissionResult filler =
      Admit(host, DocPod("00000000-0000-4000-8000-000000000000", "filler", "filler",
                         {{"cpu", 38}, {"memory", 200 * kGiB}}));
  CHECK(Owned(filler, apply::OciProperty::kCpusetCpus) == "2-39");

  const std::string netns_path = f.fake().netns_dir + "/ns1";
  int n = 0;
  for (const auto& [uid, cpus] : {std::pair{"c44ba6fd-2ce5-43e0-8d4d-b2224dfaeebd", "42-51"},
                                  std::pair{"a1b2c3d4-0000-4000-8000-000000000002", "52-61"}}) {
    ++n;
    admission::AdmissionResult r =
        Admit(host, DocPod(uid, "pod" + std::to_string(n), "numa-enhancement",
                           {{"cpu", 10}, {"memory", 20 * kGiB}}));
    CHECK(Owned(r, apply::OciProperty::kCpusetCpus) == cpus);
    CHECK(Owned(r, apply::OciProperty::kCpusetMems) == "1");
    CHECK(r.update.envs["AFFINITY_NIC_NAME"] == "eth1");
    CHECK(r.update.envs["AFFINITY_NIC_ADDR_IPV4"] == "10.0.1.10");
    CHECK(r.update.envs["AFFINITY_NIC_ADDR_IPV6"] == "fd00:1::10");
    CHECK(r.update.annotations["kubernetes.io/host-netns-path"] == netns_path);
  }

  // Tools see the same through pod-resources: both pods on NUMA node 1 sharing eth1.
  auto pod = host.state().GetPod("c44ba6fd-2ce5-43e0-8d4d-b2224dfaeebd");
  REQUIRE(pod);
  ::v1::PodResources listed =
      podresources::ToPodResources(*pod, podresources::PodResourcesMapping{});
  REQUIRE(listed.containers_size() == 1);
  CHECK(listed.containers(0).cpu_ids_size() == 10);
  REQUIRE(listed.containers(0).devices_size() == 1);
  // Device ids are interface names, qualified by network namespace outside the root one.
  CHECK(listed.containers(0).devices(0).device_ids(0) == "ns1/eth1");
  CHECK(listed.containers(0).devices(0).topology().nodes(0).id() == 1);
}

}  // namespace
}  // namespace qrm::host::testing
