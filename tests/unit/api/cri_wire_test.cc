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

TEST_CASE("CRI Signal enum names coexist with <csignal> macros", "[api][cri]") {
  runtime::v1::Signal sig = runtime::v1::RUNTIME_DEFAULT;
  REQUIRE(runtime::v1::Signal_Parse("SIGTERM", &sig));
  CHECK(static_cast<int>(sig) == 23);  // CRI numbering, not the host's
  CHECK(runtime::v1::Signal_Name(sig) == "SIGTERM");
  CHECK(SIGTERM == 15);  // the libc macro is intact after the generated header
  CHECK(runtime::v1::Signal_descriptor()->value_count() == 66);
}
