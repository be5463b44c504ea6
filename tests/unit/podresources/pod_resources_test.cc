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
#include "tests/support/temp_dir.h"

namespace qrm::host {
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

ContainerAllocation DocExample3Container() {
  ContainerAllocation c;
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
  PodAllocation pod;
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
    (*q->mutable_annotations())[kAllocatableCpusAnnotation] = node == 0 ? "2-39" : "42-79";
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
  StateStore state(dir.path() + "/state");
  REQUIRE(state.Load().ok());
  ContainerAllocation c = DocExample3Container();
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
    (*q->mutable_annotations())[kAllocatableCpusAnnotation] = "0-3";
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
    CHECK(s.error_code() == grpc::StatusCode::NOT_FOUND);
    CHECK_THAT(s.error_message(), Catch::Contains("other/pod1"));
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
  StateStore state(dir.path() + "/state");
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
  StateStore state(dir.path() + "/state");
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
  StateStore state(dir.path() + "/state");
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
}  // namespace qrm::host
