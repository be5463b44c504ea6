// Golden-bytes tests for api/cri_runtime_v1.proto (package runtime.v1). Every expected byte
// string is computed by hand from the public field numbers and wire types:
// tag = (field_number << 3) | wire_type, wire type 0 = varint, 1 = 64-bit, 2 = length-delimited.

// <csignal> first on purpose: the CRI Signal enum has values named like the libc macros.
#include <csignal>

#include <catch2/catch.hpp>

#include "api/cri_runtime_v1.grpc.pb.h"
#include "api/cri_runtime_v1.pb.h"
#include "tests/unit/api/wire_util.h"

using qrm::test::Serialize;
using qrm::test::ToHex;
using qrm::test::Wire;

TEST_CASE("CRI LinuxContainerResources cpuset and quota", "[api][cri]") {
  runtime::v1::LinuxContainerResources res;
  res.set_cpuset_cpus("0-1");
  res.set_cpu_quota(50000);

  const std::string golden = Wire(
      "10 d0 86 03"  // tag 0x10 = field 2 (cpu_quota) varint; 50000 = 0x50 | 0x06<<7 | 0x03<<14
      "32 03 '0-1'"  // tag 0x32 = field 6 (cpuset_cpus) len-delimited, 3 bytes
  );
  CHECK(ToHex(Serialize(res)) == ToHex(golden));

  runtime::v1::LinuxContainerResources parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.cpuset_cpus() == "0-1");
  CHECK(parsed.cpu_quota() == 50000);
  CHECK(parsed.cpu_period() == 0);
}

TEST_CASE("CRI LinuxContainerResources remaining field kinds", "[api][cri]") {
  runtime::v1::LinuxContainerResources res;
  res.set_cpu_period(100000);
  res.set_cpu_shares(1024);
  res.set_oom_score_adj(-1);
  auto* huge = res.add_hugepage_limits();
  huge->set_page_size("2MB");
  huge->set_limit(1ULL << 30);
  (*res.mutable_unified())["cpu.weight"] = "100";
  res.set_memory_swap_limit_in_bytes(1);

  const std::string golden = Wire(
      "08 a0 8d 06"  // field 1 (cpu_period) varint 100000 = 0x20 | 0x0d<<7 | 0x06<<14
      "18 80 08"     // field 3 (cpu_shares) varint 1024 = 0x00 | 0x08<<7
      // field 5 (oom_score_adj) int64 -1: ten-byte two's-complement varint
      "28 ff ff ff ff ff ff ff ff ff 01"
      // field 8 (hugepage_limits) len 11: HugepageLimit{page_size(1)="2MB", limit(2)=2^30}
      "42 0b  0a 03 '2MB'  10 80 80 80 80 04"
      // field 9 (unified) map entry len 17: key(1)="cpu.weight", value(2)="100"
      "4a 11  0a 0a 'cpu.weight'  12 03 '100'"
      "50 01"  // field 10 (memory_swap_limit_in_bytes) varint 1
  );
  CHECK(ToHex(Serialize(res)) == ToHex(golden));

  runtime::v1::LinuxContainerResources parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.cpu_period() == 100000);
  CHECK(parsed.cpu_shares() == 1024);
  CHECK(parsed.oom_score_adj() == -1);
  REQUIRE(parsed.hugepage_limits_size() == 1);
  CHECK(parsed.hugepage_limits(0).page_size() == "2MB");
  CHECK(parsed.hugepage_limits(0).limit() == (1ULL << 30));
  CHECK(parsed.unified().at("cpu.weight") == "100");
  CHECK(parsed.memory_swap_limit_in_bytes() == 1);
}

TEST_CASE("CRI CreateContainerRequest nested cpuset, labels and sandbox annotations",
          "[api][cri]") {
  runtime::v1::CreateContainerRequest req;
  req.set_pod_sandbox_id("sb1");
  auto* config = req.mutable_config();
  config->mutable_metadata()->set_name("app");
  (*config->mutable_labels())["io.kubernetes.pod.uid"] = "u1";
  config->mutable_linux()->mutable_resources()->set_cpuset_cpus("0-1");
  (*req.mutable_sandbox_config()->mutable_annotations())["katalyst.kubewharf.io/qos_level"] =
      "dedicated_cores";

  const std::string golden = Wire(
      "0a 03 'sb1'"  // field 1 (pod_sandbox_id)
      // field 2 (config) ContainerConfig, 45 bytes:
      "12 2d"
      "  0a 05  0a 03 'app'"  // ContainerConfig field 1 (metadata) -> ContainerMetadata.name(1)
      // ContainerConfig field 9 (labels) tag 0x4a, entry 27 bytes: key(1) 21 bytes, value(2)
      "  4a 1b  0a 15 'io.kubernetes.pod.uid'  12 02 'u1'"
      // ContainerConfig field 15 (linux) tag 0x7a = 15<<3|2, 7 bytes:
      //   LinuxContainerConfig field 1 (resources) 5 bytes: cpuset_cpus(6) tag 0x32
      "  7a 07  0a 05  32 03 '0-1'"
      // field 3 (sandbox_config) PodSandboxConfig, 52 bytes:
      //   field 7 (annotations) tag 0x3a, entry 50 bytes: key 31 bytes, value 15 bytes
      "1a 34  3a 32  0a 1f 'katalyst.kubewharf.io/qos_level'  12 0f 'dedicated_cores'");
  CHECK(ToHex(Serialize(req)) == ToHex(golden));

  runtime::v1::CreateContainerRequest parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.pod_sandbox_id() == "sb1");
  CHECK(parsed.config().metadata().name() == "app");
  CHECK(parsed.config().labels().at("io.kubernetes.pod.uid") == "u1");
  CHECK(parsed.config().linux().resources().cpuset_cpus() == "0-1");
  CHECK(parsed.sandbox_config().annotations().at("katalyst.kubewharf.io/qos_level") ==
        "dedicated_cores");
}

TEST_CASE("CRI UpdateContainerResourcesRequest with annotations", "[api][cri]") {
  runtime::v1::UpdateContainerResourcesRequest req;
  req.set_container_id("c1");
  req.mutable_linux()->set_cpuset_cpus("2-3");
  req.mutable_linux()->set_cpuset_mems("0");
  (*req.mutable_annotations())["qrm.io/numa"] = "0";
  (*req.mutable_annotations())["a"] = "1";

  const std::string golden = Wire(
      "0a 02 'c1'"  // field 1 (container_id)
      // field 2 (linux) LinuxContainerResources, 8 bytes: cpuset_cpus(6) 0x32, cpuset_mems(7) 0x3a
      "12 08  32 03 '2-3'  3a 01 '0'"
      // field 4 (annotations) tag 0x22, one entry per element, sorted by key when deterministic
      "22 06  0a 01 'a'  12 01 '1'"
      "22 10  0a 0b 'qrm.io/numa'  12 01 '0'");
  CHECK(ToHex(Serialize(req)) == ToHex(golden));

  runtime::v1::UpdateContainerResourcesRequest parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.container_id() == "c1");
  CHECK(parsed.linux().cpuset_cpus() == "2-3");
  CHECK(parsed.linux().cpuset_mems() == "0");
  CHECK_FALSE(parsed.has_windows());
  CHECK(parsed.annotations().size() == 2);
  CHECK(parsed.annotations().at("qrm.io/numa") == "0");
  CHECK(parsed.annotations().at("a") == "1");
}

TEST_CASE("CRI unknown fields survive parse, in-place edit and re-serialize", "[api][cri]") {
  // A newer kubelet may send fields this build does not know; the proxy must forward them.
  const std::string input = Wire(
      "0a 03 'sb1'"
      // field 2 (config) 13 bytes -> linux(15) 11 bytes -> resources(1) 9 bytes:
      //   cpuset_cpus(6) "0-1", then unknown field 50 len-delimited: tag 50<<3|2 = 402 = 92 03
      "12 0d  7a 0b  0a 09  32 03 '0-1'  92 03 01 'x'"
      // unknown field 999 varint 1: tag 999<<3|0 = 7992 = 0x38 | 0x3e<<7 -> b8 3e
      "b8 3e 01");

  runtime::v1::CreateContainerRequest req;
  REQUIRE(req.ParseFromString(input));
  CHECK(req.GetReflection()->GetUnknownFields(req).field_count() == 1);
  const auto& res = req.config().linux().resources();
  CHECK(res.GetReflection()->GetUnknownFields(res).field_count() == 1);

  // Edit a known field in place, as the proxy does.
  req.mutable_config()->mutable_linux()->mutable_resources()->set_cpuset_cpus("4-5");

  const std::string expected = Wire(
      "0a 03 'sb1'"
      "12 0d  7a 0b  0a 09  32 03 '4-5'  92 03 01 'x'"  // edited value, unknown field kept
      "b8 3e 01");
  CHECK(ToHex(Serialize(req)) == ToHex(expected));
}

TEST_CASE("CRI Signal enum values carry the SIGNAL_ prefix and the CRI numbering", "[api][cri]") {
  runtime::v1::Signal sig = runtime::v1::SIGNAL_RUNTIME_DEFAULT;
  REQUIRE(runtime::v1::Signal_Parse("SIGNAL_SIGTERM", &sig));
  CHECK(static_cast<int>(sig) == 23);  // CRI numbering, not the host's
  CHECK(runtime::v1::Signal_Name(sig) == "SIGNAL_SIGTERM");
  CHECK_FALSE(runtime::v1::Signal_Parse("SIGTERM", &sig));  // the names before the rename
  CHECK(SIGTERM == 15);  // the libc macro is intact after the generated header
  CHECK(runtime::v1::Signal_descriptor()->value_count() == 66);
  CHECK(runtime::v1::SIGNAL_SIGRTMAX == 65);

  runtime::v1::ContainerConfig config;
  config.set_stop_signal(runtime::v1::SIGNAL_SIGKILL);
  CHECK(ToHex(Serialize(config)) == ToHex(Wire("90 01 0d")));  // field 18 varint 13
}

TEST_CASE("CRI KeyValue.value is bytes: env values need not be UTF-8", "[api][cri]") {
  // The same wire type as the string it replaced (2), so old encodings still parse.
  const std::string golden = Wire("0a 01 'K'  12 03 ff 00 fe");
  runtime::v1::KeyValue kv;
  REQUIRE(kv.ParseFromString(golden));
  CHECK(kv.value() == std::string("\xff\x00\xfe", 3));
  CHECK(ToHex(Serialize(kv)) == ToHex(golden));
  CHECK(runtime::v1::KeyValue::descriptor()->FindFieldByName("value")->type() ==
        google::protobuf::FieldDescriptor::TYPE_BYTES);

  // Inside a CreateContainerRequest: config(2) -> envs(6) tag 0x32.
  const std::string request = Wire("12 09  32 07  0a 01 'K'  12 02 c3 28");
  runtime::v1::CreateContainerRequest parsed;
  REQUIRE(parsed.ParseFromString(request));  // c3 28 is not UTF-8
  CHECK(parsed.config().envs(0).value() == std::string("\xc3\x28", 2));
}

TEST_CASE("CRI Mount.mount_options and RuntimeFeatures.mount_options", "[api][cri]") {
  runtime::v1::Mount mount;
  mount.set_container_path("/d");
  mount.add_mount_options("noexec");
  mount.add_mount_options("nodev");
  // container_path(1) 0x0a; mount_options(11) tag 11<<3|2 = 0x5a, one per element
  const std::string golden = Wire("0a 02 '/d'  5a 06 'noexec'  5a 05 'nodev'");
  CHECK(ToHex(Serialize(mount)) == ToHex(golden));
  runtime::v1::Mount parsed;
  REQUIRE(parsed.ParseFromString(golden));
  REQUIRE(parsed.mount_options_size() == 2);
  CHECK(parsed.mount_options(1) == "nodev");

  runtime::v1::RuntimeFeatures features;
  features.set_mount_options(true);
  CHECK(ToHex(Serialize(features)) == ToHex(Wire("18 01")));  // field 3 varint 1
}

TEST_CASE("CRI CheckpointPod and RestorePod messages", "[api][cri]") {
  runtime::v1::CheckpointPodRequest checkpoint;
  checkpoint.set_pod_sandbox_id("sb");
  checkpoint.set_output_path("/c");
  checkpoint.add_container_ids("c1");
  (*checkpoint.mutable_options())["k"] = "v";
  const std::string checkpoint_golden = Wire(
      "0a 02 'sb'"                     // pod_sandbox_id(1)
      "12 02 '/c'"                     // output_path(2)
      "1a 02 'c1'"                     // container_ids(3)
      "22 06  0a 01 'k'  12 01 'v'");  // options(4) map entry
  CHECK(ToHex(Serialize(checkpoint)) == ToHex(checkpoint_golden));
  CHECK(Serialize(runtime::v1::CheckpointPodResponse()).empty());

  runtime::v1::RestorePodRequest restore;
  restore.set_checkpoint_path("/c");
  restore.mutable_config()->mutable_metadata()->set_uid("u");
  restore.set_runtime_handler("rh");
  (*restore.mutable_options())["k"] = "v";
  restore.add_container_configs()->mutable_metadata()->set_name("a");
  const std::string restore_golden = Wire(
      "0a 02 '/c'"                   // checkpoint_path(1)
      "12 05  0a 03  12 01 'u'"      // config(2) -> metadata(1) -> uid(2)
      "1a 02 'rh'"                   // runtime_handler(3)
      "22 06  0a 01 'k'  12 01 'v'"  // options(4)
      "2a 05  0a 03  0a 01 'a'");    // container_configs(5) -> metadata(1) -> name(1)
  CHECK(ToHex(Serialize(restore)) == ToHex(restore_golden));

  runtime::v1::RestorePodResponse restored;
  REQUIRE(restored.ParseFromString(Wire("0a 02 'sb'  12 07  0a 01 'a'  12 02 'c1'")));
  CHECK(restored.pod_sandbox_id() == "sb");
  REQUIRE(restored.restored_containers_size() == 1);
  CHECK(restored.restored_containers(0).name() == "a");
  CHECK(restored.restored_containers(0).container_id() == "c1");
}

TEST_CASE("CRI ExecRequest and AttachRequest have no field past upstream's", "[api][cri]") {
  // Our old file declared audit_request_id (7 and 6) that upstream never had; a sender's
  // bytes in those numbers now stay unknown fields and are forwarded as they came.
  CHECK(runtime::v1::ExecRequest::descriptor()->field_count() == 6);
  CHECK(runtime::v1::AttachRequest::descriptor()->field_count() == 5);
  const std::string bytes = Wire("0a 01 'c'  3a 01 'x'");
  runtime::v1::ExecRequest exec;
  REQUIRE(exec.ParseFromString(bytes));
  CHECK(ToHex(Serialize(exec)) == ToHex(bytes));
}
