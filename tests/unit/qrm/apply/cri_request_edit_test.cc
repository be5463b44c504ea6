// In-place edits: qrm's fields go in, the kubelet's fields and any field our .proto does not
// know come out as they went in.
#include "qrm/apply/cri_request_edit.h"

#include <catch2/catch.hpp>
#include <google/protobuf/unknown_field_set.h>

#include "cri-shim/byte_buffer.h"

namespace qrm::shim {
namespace {

namespace cri = ::runtime::v1;
namespace pb = ::resourceplugin::v1alpha1;

apply::ContainerUpdate CpusetUpdate() {
  pb::ResourceAllocationInfo cpu;
  cpu.set_oci_property_name("CpusetCpus");
  cpu.set_allocation_result("2-3");
  (*cpu.mutable_envs())["QRM_CPUS"] = "2-3";
  (*cpu.mutable_annotations())["qrm.io/cpus"] = "2-3";
  pb::ResourceAllocationInfo memory;
  memory.set_oci_property_name("CpusetMems");
  memory.set_allocation_result("1");
  auto update = apply::BuildContainerUpdate({{"cpu", cpu}, {"memory", memory}});
  REQUIRE(update.ok());
  return *update;
}

void AddUnknown(google::protobuf::Message& m, int field, uint64_t value) {
  m.GetReflection()->MutableUnknownFields(&m)->AddVarint(field, value);
}

uint64_t UnknownVarint(const google::protobuf::Message& m, int field) {
  const auto& unknown = m.GetReflection()->GetUnknownFields(m);
  for (int i = 0; i < unknown.field_count(); ++i) {
    if (unknown.field(i).number() == field) return unknown.field(i).varint();
  }
  return 0;
}

// A kubelet request from a newer CRI: fields we do not declare at every nesting level the
// edit touches or passes by, decoded from bytes as the shim gets it.
cri::CreateContainerRequest NewerKubeletRequest() {
  cri::CreateContainerRequest r;
  r.set_pod_sandbox_id("sandbox-1");
  auto* config = r.mutable_config();
  config->mutable_metadata()->set_name("app");
  auto* env = config->add_envs();
  env->set_key("PATH");
  env->set_value("/bin");
  env = config->add_envs();
  env->set_key("QRM_CPUS");
  env->set_value("old");
  (*config->mutable_annotations())["kubelet"] = "kept";
  auto* resources = config->mutable_linux()->mutable_resources();
  resources->set_cpu_shares(1024);
  resources->set_memory_limit_in_bytes(1 << 30);
  (*r.mutable_sandbox_config()->mutable_annotations())["pod"] = "annotation";
  AddUnknown(r, 99, 1);
  AddUnknown(*config, 200, 2);
  AddUnknown(*config->mutable_linux(), 50, 3);
  AddUnknown(*resources, 77, 4);
  AddUnknown(*r.mutable_sandbox_config(), 100, 5);
  AddUnknown(*config->mutable_metadata(), 9, 6);
  cri::CreateContainerRequest decoded;
  REQUIRE(ParseByteBuffer(SerializeToByteBuffer(r), &decoded));
  return decoded;
}

TEST_CASE("CreateContainer: owned fields, envs and annotations go in, nothing else changes",
          "[cri_shim][edit]") {
  cri::CreateContainerRequest request = NewerKubeletRequest();
  ApplyToCreateContainer(CpusetUpdate(), &request);
  // What the runtime decodes from the edited bytes.
  cri::CreateContainerRequest sent;
  REQUIRE(ParseByteBuffer(SerializeToByteBuffer(request), &sent));

  const auto& resources = sent.config().linux().resources();
  CHECK(resources.cpuset_cpus() == "2-3");
  CHECK(resources.cpuset_mems() == "1");
  CHECK(resources.cpu_shares() == 1024);
  CHECK(resources.memory_limit_in_bytes() == 1 << 30);
  REQUIRE(sent.config().envs_size() == 2);  // QRM_CPUS overwritten in place, order kept
  CHECK(sent.config().envs(0).key() == "PATH");
  CHECK(sent.config().envs(1).key() == "QRM_CPUS");
  CHECK(sent.config().envs(1).value() == "2-3");
  CHECK(sent.config().annotations().at("kubelet") == "kept");
  CHECK(sent.config().annotations().at("qrm.io/cpus") == "2-3");
  CHECK(sent.sandbox_config().annotations().at("pod") == "annotation");

  CHECK(UnknownVarint(sent, 99) == 1);
  CHECK(UnknownVarint(sent.config(), 200) == 2);
  CHECK(UnknownVarint(sent.config().linux(), 50) == 3);
  CHECK(UnknownVarint(resources, 77) == 4);
  CHECK(UnknownVarint(sent.sandbox_config(), 100) == 5);
  CHECK(UnknownVarint(sent.config().metadata(), 9) == 6);
}

TEST_CASE("An update without effect is recognized", "[cri_shim][edit]") {
  CHECK_FALSE(HasEffect(apply::ContainerUpdate{}));
  CHECK(HasEffect(CpusetUpdate()));
  apply::ContainerUpdate envs_only;
  envs_only.envs["A"] = "1";
  CHECK(HasEffect(envs_only));
}

TEST_CASE("The kubelet's UpdateContainerResources keeps its fields, qrm's owned ones win",
          "[cri_shim][edit]") {
  cri::UpdateContainerResourcesRequest request;
  request.set_container_id("c1");
  request.mutable_linux()->set_cpuset_cpus("0-7");  // the kubelet's idea
  request.mutable_linux()->set_cpu_shares(2048);
  (*request.mutable_annotations())["kubelet"] = "x";
  AddUnknown(*request.mutable_linux(), 88, 7);
  AddUnknown(request, 66, 8);
  ApplyToUpdateContainerResources(CpusetUpdate(), &request);
  cri::UpdateContainerResourcesRequest sent;
  REQUIRE(ParseByteBuffer(SerializeToByteBuffer(request), &sent));
  CHECK(sent.container_id() == "c1");
  CHECK(sent.linux().cpuset_cpus() == "2-3");
  CHECK(sent.linux().cpuset_mems() == "1");
  CHECK(sent.linux().cpu_shares() == 2048);
  CHECK(sent.annotations().at("kubelet") == "x");
  CHECK(UnknownVarint(sent.linux(), 88) == 7);
  CHECK(UnknownVarint(sent, 66) == 8);
}

TEST_CASE("The reconcile update carries only owned fields and qrm's annotations",
          "[cri_shim][edit]") {
  const cri::UpdateContainerResourcesRequest r = UpdateRequestFor("c9", CpusetUpdate());
  cri::UpdateContainerResourcesRequest expected;
  expected.set_container_id("c9");
  expected.mutable_linux()->set_cpuset_cpus("2-3");
  expected.mutable_linux()->set_cpuset_mems("1");
  (*expected.mutable_annotations())["qrm.io/cpus"] = "2-3";
  CHECK(r.SerializeAsString() == expected.SerializeAsString());
}

TEST_CASE("ByteBuffer conversions round-trip and reject garbage", "[cri_shim][edit]") {
  cri::VersionResponse v;
  v.set_runtime_name("containerd");
  v.set_runtime_version(std::string(100000, 'v'));  // spans several slices
  cri::VersionResponse back;
  REQUIRE(ParseByteBuffer(SerializeToByteBuffer(v), &back));
  CHECK(back.SerializeAsString() == v.SerializeAsString());
  const std::string garbage = "\xff\xff\xff";
  grpc::Slice slice(garbage);
  CHECK_FALSE(ParseByteBuffer(grpc::ByteBuffer(&slice, 1), &back));
}

}  // namespace
}  // namespace qrm::shim
