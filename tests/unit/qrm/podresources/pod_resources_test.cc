// The pod-resources service: conversion from the host checkpoint and plugin reports, the
// rate limit, and the real gRPC service on a Unix socket.
#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/podresources_v1.grpc.pb.h"
#include "qrm/podresources/conversion.h"
#include "qrm/podresources/pod_resources_server.h"
#include "qrm/podresources/rate_limiter.h"
#include "testing/temp_dir.h"

namespace qrm::podresources {
namespace {

namespace rp = ::resourceplugin::v1alpha1;

rp::ResourceAllocationInfo Alloc(const std::string& property, const std::string& result,
                                 double quantity, std::vector<uint64_t> nodes) {
  rp::ResourceAllocationInfo info;
  info.set_oci_property_name(property);
  info.set_is_scalar_resource(true);
  info.set_allocated_quantity(quantity);
  info.set_allocation_result(result);
  if (!nodes.empty()) {
    rp::TopologyHint* hint = info.mutable_resource_hints()->add_hints();
    for (uint64_t n : nodes) hint->add_nodes(n);
    hint->set_preferred(true);
  }
  return info;
}

state::ContainerAllocation DocExample3Container() {
  state::ContainerAllocation c;
  c.resources["cpu"] = Alloc("CpusetCpus", "42-51", 10, {1});
  c.resources["memory"] = Alloc("CpusetMems", "1", 20.0 * (1ULL << 30), {1});
  c.resources["qrm.io/nic"] = Alloc("", "eth1", 0, {1});
  c.resources["example.com/other"] = Alloc("", "x", 1, {});
  return c;
}

std::vector<int64_t> Ids(const google::protobuf::RepeatedField<int64_t>& f) {
  return {f.begin(), f.end()};
}

TEST_CASE("a container's checkpointed allocations become podresources fields") {
  state::PodAllocation pod;
  pod.uid = "c44ba6fd";
  pod.name = "pod1";
  pod.ns = "default";
  pod.containers["container0"] = DocExample3Container();
  ::v1::PodResources out = ToPodResources(pod, PodResourcesMapping{});
  CHECK(out.name() == "pod1");
  CHECK(out.namespace_() == "default");
  REQUIRE(out.containers_size() == 1);
  const auto& c = out.containers(0);
  CHECK(c.name() == "container0");
  CHECK(Ids(c.cpu_ids()) == std::vector<int64_t>{42, 43, 44, 45, 46, 47, 48, 49, 50, 51});
  REQUIRE(c.memory_size() == 1);
  CHECK(c.memory(0).memory_type() == "memory");
  CHECK(c.memory(0).size() == 20ULL << 30);
  REQUIRE(c.memory(0).topology().nodes_size() == 1);
  CHECK(c.memory(0).topology().nodes(0).id() == 1);
  REQUIRE(c.devices_size() == 1);  // example.com/other is not a configured device resource
  CHECK(c.devices(0).resource_name() == "qrm.io/nic");
  CHECK(c.devices(0).device_ids(0) == "eth1");
  CHECK(c.devices(0).topology().nodes(0).id() == 1);
}

TEST_CASE("allocatable: cpus from the per-node annotation, memory and named devices per node") {
  std::map<std::string, rp::AllocatableTopologyAwareResource> alloc;
  for (int node : {0, 1}) {
    rp::TopologyAwareQuantity* q = alloc["cpu"].add_topology_aware_allocatable_quantity_list();
    q->set_node(node);
    q->set_resource_value(38);
    (*q->mutable_annotations())[kCpusAnnotation] = node == 0 ? "2-39" : "42-79";
    rp::TopologyAwareQuantity* m = alloc["memory"].add_topology_aware_allocatable_quantity_list();
    m->set_node(node);
    m->set_resource_value(1000.0 + node);
    rp::TopologyAwareQuantity* n =
        alloc["qrm.io/nic"].add_topology_aware_allocatable_quantity_list();
    n->set_node(node);
    n->set_name(node == 0 ? "eth0" : "eth1");
  }
  auto out = ToAllocatable(alloc, PodResourcesMapping{});
  REQUIRE(out.cpu_ids_size() == 76);
  CHECK(out.cpu_ids(0) == 2);
  CHECK(out.cpu_ids(75) == 79);
  REQUIRE(out.memory_size() == 2);
  CHECK(out.memory(1).size() == 1001);
  CHECK(out.memory(1).topology().nodes(0).id() == 1);
  REQUIRE(out.devices_size() == 2);
  CHECK(out.devices(1).device_ids(0) == "eth1");
}

TEST_CASE("memory blocks always carry the NUMA nodes their bytes come from") {
  PodResourcesMapping mapping;
  mapping.machine_nodes = NumaMask::FirstN(2);
  auto memory_nodes = [&](const rp::ResourceAllocationInfo& info) {
    state::PodAllocation pod;
    pod.containers["c"].resources["memory"] = info;
    ::v1::PodResources out = ToPodResources(pod, mapping);
    REQUIRE(out.containers(0).memory_size() == 1);
    std::vector<int64_t> nodes;
    for (const auto& n : out.containers(0).memory(0).topology().nodes()) nodes.push_back(n.id());
    return nodes;
  };
  // NUMA-bound: the hint's nodes.
  CHECK(memory_nodes(Alloc("CpusetMems", "1", 1 << 20, {1})) == std::vector<int64_t>{1});
  // No hint, but the bytes per node (topology_assignments).
  rp::ResourceAllocationInfo assigned = Alloc("", "", 3 << 20, {});
  (*assigned.mutable_topology_assignments())[1] = 1 << 20;
  (*assigned.mutable_topology_assignments())[0] = 2 << 20;
  CHECK(memory_nodes(assigned) == std::vector<int64_t>{0, 1});
  // No hint, only the cpuset.mems written.
  CHECK(memory_nodes(Alloc("CpusetMems", "1", 1 << 20, {})) == std::vector<int64_t>{1});
  // Bound to no node (a shared container): any node of the machine.
  CHECK(memory_nodes(Alloc("", "", 64 << 20, {})) == std::vector<int64_t>{0, 1});
}

TEST_CASE("allocatable devices: one id per unit of a countable quantity") {
  std::map<std::string, rp::AllocatableTopologyAwareResource> alloc;
  auto add = [&](const std::string& resource, int node, double value, const std::string& name) {
    rp::TopologyAwareQuantity* q = alloc[resource].add_topology_aware_allocatable_quantity_list();
    q->set_node(node);
    q->set_resource_value(value);
    q->set_name(name);
  };
  add("example.com/gpu", 0, 3, "");                 // countable, unnamed
  add("example.com/gpu", 1, 2, "example.com/gpu");  // named after the resource: still units
  add("example.com/fpga", 1, 2, "card0");           // a named quantity of two units
  add("example.com/fpga", 0, 1e30, "");             // a nonsense report stays bounded
  add("qrm.io/nic", 0, 1, "eth0");                  // one device: its own name
  PodResourcesMapping mapping;
  mapping.device_resources = {"example.com/gpu", "example.com/fpga", "qrm.io/nic"};
  auto out = ToAllocatable(alloc, mapping);
  std::map<std::string, std::vector<std::string>> ids;  // "resource@node" -> ids
  for (const auto& d : out.devices()) {
    REQUIRE(d.topology().nodes_size() == 1);
    auto& list = ids[d.resource_name() + "@" + std::to_string(d.topology().nodes(0).id())];
    list.insert(list.end(), d.device_ids().begin(), d.device_ids().end());
  }
  CHECK(ids["example.com/gpu@0"] == std::vector<std::string>{"example.com/gpu-numa0-0",
                                                             "example.com/gpu-numa0-1",
                                                             "example.com/gpu-numa0-2"});
  CHECK(ids["example.com/gpu@1"] ==
        std::vector<std::string>{"example.com/gpu-numa1-0", "example.com/gpu-numa1-1"});
  CHECK(ids["example.com/fpga@1"] == std::vector<std::string>{"card0-numa1-0", "card0-numa1-1"});
  CHECK(ids["example.com/fpga@0"].size() == static_cast<size_t>(kMaxDeviceUnits));
  CHECK(ids["qrm.io/nic@0"] == std::vector<std::string>{"eth0"});
}

// The runtime as ListContainers reports it.
class FakeView final : public reconcile::RuntimeView {
 public:
  StatusOr<std::set<std::string>> ListPodUids() override {
    std::set<std::string> uids;
    for (const auto& c : containers) uids.insert(c.pod_uid);
    return uids;
  }
  StatusOr<std::vector<reconcile::RuntimeContainer>> ListContainers() override {
    if (!error.ok()) return error;
    return containers;
  }
  std::vector<reconcile::RuntimeContainer> containers;
  Status error = Status::Ok();
};

TEST_CASE("List and Get answer for every active pod, with empty resources where qrm has none") {
  testing::TempDir dir;
  state::StateStore state(dir.path() + "/state");
  REQUIRE(state.Load().ok());
  REQUIRE(state.PutContainer("uid-a", "pod-a", "default", "main", DocExample3Container()).ok());
  FakeView view;
  view.containers = {
      {"uid-a", "pod-a", "default", "main"},
      {"uid-a", "pod-a", "default", "sidecar"},  // requested nothing qrm manages
      {"uid-b", "skipped", "kube-system", "app"},
      {"uid-b", "skipped", "kube-system", "app"},  // restarted: old and new container
  };
  PodResourcesOptions options;
  options.socket = dir.path() + "/pr.sock";
  options.qps = 0;
  PodResourcesServer server(
      options, state, [] { return std::map<std::string, rp::AllocatableTopologyAwareResource>{}; },
      &view);
  REQUIRE(server.Start().ok());
  auto stub = ::v1::PodResourcesLister::NewStub(
      grpc::CreateChannel("unix:" + options.socket, grpc::InsecureChannelCredentials()));

  grpc::ClientContext list_ctx;
  ::v1::ListPodResourcesResponse list;
  REQUIRE(stub->List(&list_ctx, {}, &list).ok());
  REQUIRE(list.pod_resources_size() == 2);
  const auto& a = list.pod_resources(0);
  CHECK(a.name() == "pod-a");
  REQUIRE(a.containers_size() == 2);
  CHECK(a.containers(0).name() == "main");
  CHECK(a.containers(0).cpu_ids_size() == 10);
  CHECK(a.containers(1).name() == "sidecar");
  CHECK(a.containers(1).cpu_ids_size() == 0);
  CHECK(a.containers(1).memory_size() == 0);
  const auto& b = list.pod_resources(1);
  CHECK(b.name() == "skipped");
  CHECK(b.namespace_() == "kube-system");
  REQUIRE(b.containers_size() == 1);
  CHECK(b.containers(0).name() == "app");
  CHECK(b.containers(0).devices_size() == 0);
  CHECK(b.cpu_ids_size() == 0);  // pod-level fields: qrm allocates per container

  grpc::ClientContext get_ctx;
  ::v1::GetPodResourcesRequest req;
  req.set_pod_name("skipped");
  req.set_pod_namespace("kube-system");
  ::v1::GetPodResourcesResponse got;
  grpc::Status s = stub->Get(&get_ctx, req, &got);
  INFO(s.error_message());
  REQUIRE(s.ok());
  CHECK(got.pod_resources().containers_size() == 1);

  // The runtime not answering: the checkpoint alone, never an error.
  view.error = UnavailableError("runtime down");
  grpc::ClientContext down_ctx;
  ::v1::ListPodResourcesResponse down;
  REQUIRE(stub->List(&down_ctx, {}, &down).ok());
  REQUIRE(down.pod_resources_size() == 1);
  CHECK(down.pod_resources(0).containers_size() == 1);
}

TEST_CASE("token bucket: a burst, then the configured rate") {
  TokenBucket bucket(100, 10);
  auto t0 = TokenBucket::Clock::now();
  int granted = 0;
  for (int i = 0; i < 20; ++i) granted += bucket.TryAcquire(t0) ? 1 : 0;
  CHECK(granted == 10);
  CHECK_FALSE(bucket.TryAcquire(t0 + std::chrono::milliseconds(5)));
  CHECK(bucket.TryAcquire(t0 + std::chrono::milliseconds(11)));  // 1.1 tokens refilled
  CHECK_FALSE(bucket.TryAcquire(t0 + std::chrono::milliseconds(12)));
  // Refill never exceeds the burst.
  int later = 0;
  for (int i = 0; i < 20; ++i) later += bucket.TryAcquire(t0 + std::chrono::seconds(60)) ? 1 : 0;
  CHECK(later == 10);
  TokenBucket unlimited(0, 1);
  for (int i = 0; i < 1000; ++i) REQUIRE(unlimited.TryAcquire(t0));
}

TEST_CASE("the service answers List, Get and GetAllocatableResources on its socket") {
  testing::TempDir dir;
  state::StateStore state(dir.path() + "/state");
  REQUIRE(state.Load().ok());
  state::ContainerAllocation c = DocExample3Container();
  REQUIRE(
      state.PutContainer("c44ba6fd-2ce5-43e0-8d4d-b2224dfaeebd", "pod1", "default", "container0", c)
          .ok());
  PodResourcesOptions options;
  options.socket = dir.path() + "/run/pod-resources.sock";
  options.qps = 0;
  int allocatable_calls = 0;
  PodResourcesServer server(options, state, [&] {
    ++allocatable_calls;
    std::map<std::string, rp::AllocatableTopologyAwareResource> alloc;
    auto* q = alloc["cpu"].add_topology_aware_allocatable_quantity_list();
    (*q->mutable_annotations())[kCpusAnnotation] = "0-3";
    return alloc;
  });
  REQUIRE(server.Start().ok());
  struct stat st {};
  REQUIRE(::stat(options.socket.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  auto channel = grpc::CreateChannel("unix:" + options.socket, grpc::InsecureChannelCredentials());
  auto stub = ::v1::PodResourcesLister::NewStub(channel);
  {
    grpc::ClientContext ctx;
    ::v1::ListPodResourcesResponse list;
    REQUIRE(stub->List(&ctx, {}, &list).ok());
    REQUIRE(list.pod_resources_size() == 1);
    CHECK(list.pod_resources(0).containers(0).cpu_ids_size() == 10);
  }
  {
    grpc::ClientContext ctx;
    ::v1::GetPodResourcesRequest req;
    req.set_pod_name("pod1");
    req.set_pod_namespace("default");
    ::v1::GetPodResourcesResponse got;
    REQUIRE(stub->Get(&ctx, req, &got).ok());
    CHECK(got.pod_resources().name() == "pod1");
  }
  {
    grpc::ClientContext ctx;
    ::v1::GetPodResourcesRequest req;
    req.set_pod_name("pod1");
    req.set_pod_namespace("other");
    ::v1::GetPodResourcesResponse got;
    grpc::Status s = stub->Get(&ctx, req, &got);
    // The kubelet's answer, exactly: a plain Go error, i.e. gRPC UNKNOWN with this text.
    CHECK(s.error_code() == grpc::StatusCode::UNKNOWN);
    CHECK(s.error_message() == "pod pod1 in namespace other not found");
  }
  {
    grpc::ClientContext ctx;
    ::v1::AllocatableResourcesResponse a;
    REQUIRE(stub->GetAllocatableResources(&ctx, {}, &a).ok());
    CHECK(Ids(a.cpu_ids()) == std::vector<int64_t>{0, 1, 2, 3});
    CHECK(allocatable_calls == 1);
  }
  server.Stop();
  CHECK(::stat(options.socket.c_str(), &st) != 0);
}

TEST_CASE("the service answers RESOURCE_EXHAUSTED beyond its burst") {
  testing::TempDir dir;
  state::StateStore state(dir.path() + "/state");
  REQUIRE(state.Load().ok());
  PodResourcesOptions options;
  options.socket = dir.path() + "/pr.sock";
  options.qps = 0.001;  // effectively no refill during the test
  options.burst = 3;
  PodResourcesServer server(
      options, state, [] { return std::map<std::string, rp::AllocatableTopologyAwareResource>{}; });
  REQUIRE(server.Start().ok());
  auto stub = ::v1::PodResourcesLister::NewStub(
      grpc::CreateChannel("unix:" + options.socket, grpc::InsecureChannelCredentials()));
  int ok = 0, exhausted = 0;
  for (int i = 0; i < 6; ++i) {
    grpc::ClientContext ctx;
    ::v1::ListPodResourcesResponse list;
    grpc::Status s = stub->List(&ctx, {}, &list);
    ok += s.ok() ? 1 : 0;
    exhausted += s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ? 1 : 0;
  }
  CHECK(ok == 3);
  CHECK(exhausted == 3);
}

TEST_CASE("a non-socket file in the way is refused, never deleted") {
  testing::TempDir dir;
  state::StateStore state(dir.path() + "/state");
  REQUIRE(state.Load().ok());
  PodResourcesOptions options;
  options.socket = dir.path() + "/pr.sock";
  testing::WriteFile(options.socket, "precious");
  PodResourcesServer server(
      options, state, [] { return std::map<std::string, rp::AllocatableTopologyAwareResource>{}; });
  Status s = server.Start();
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK(testing::ReadFile(options.socket) == "precious");
}

TEST_CASE("the socket follows qrm's mode rules: 0600 in 0700, or 0660 in 0750 with a group") {
  testing::TempDir dir;
  state::StateStore state(dir.path() + "/state");
  REQUIRE(state.Load().ok());
  const bool grouped = GENERATE(false, true);
  if (grouped && ::geteuid() != 0) {
    WARN("not root: cannot chown to another group; skipped");
    return;
  }
  PodResourcesOptions options;
  options.socket = dir.path() + "/run/qrm/pr.sock";
  options.permissions = SocketPermissionsFor(grouped ? std::optional<gid_t>(4242) : std::nullopt);
  PodResourcesServer server(
      options, state, [] { return std::map<std::string, rp::AllocatableTopologyAwareResource>{}; });
  REQUIRE(server.Start().ok());
  struct stat sock {
  }, parent{};
  REQUIRE(::stat(options.socket.c_str(), &sock) == 0);
  REQUIRE(::stat((dir.path() + "/run/qrm").c_str(), &parent) == 0);
  CHECK((sock.st_mode & 0777) == (grouped ? 0660u : 0600u));
  CHECK((parent.st_mode & 0777) == (grouped ? 0750u : 0700u));
  if (grouped) {
    CHECK(sock.st_gid == 4242);
    CHECK(parent.st_gid == 4242);
  }
}

}  // namespace
}  // namespace qrm::podresources
