// The verbose ContainerStatus info parser on documents captured from a real containerd (and
// CRI-O's shape), with optional fields missing or null, and wrong types refused as kDataLoss
// naming the field and the value.
#include "advisor/discover/runtime_info.h"

#include <string>

#include <catch2/catch.hpp>

#include "advisor/discover/cgroup_path.h"
#include "testing/temp_dir.h"

namespace qrm::advisor {
namespace {

std::string Fixture(const std::string& name) {
  return qrm::testing::ReadFile(std::string(QRM_DISCOVER_TESTDATA) + "/" + name);
}

// `text` with its one occurrence of `from` replaced by `to`.
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  return text.replace(at, from.size(), to);
}

RuntimeInfo Parsed(std::string_view json) {
  StatusOr<RuntimeInfo> info = ParseRuntimeInfo(json);
  INFO(info.status().ToString());
  REQUIRE(info.ok());
  return *info;
}

std::string Refused(std::string_view json) {
  StatusOr<RuntimeInfo> info = ParseRuntimeInfo(json);
  REQUIRE_FALSE(info.ok());
  CHECK(info.status().code() == StatusCode::kDataLoss);
  return info.status().message();
}

constexpr const char* kContainerId =
    "8fe7153ba47726479f4778745c8f4a70c95f9e2278470cd02ae770b7e9c39e0f";

TEST_CASE("containerd 1.6 verbose info: pid, cgroupsPath and the kubelet's resources",
          "[advisor][discover]") {
  const RuntimeInfo info = Parsed(Fixture("containerd-1.6-cgroupfs.json"));
  CHECK(info.pid == 14058);
  CHECK(info.cgroups_path ==
        std::string("/qrm-e2e-Eaclsu/pod6f2c1d7e-2b1a-4c3e-9d8f-0a1b2c3d4e5f/") + kContainerId);
  CHECK(info.cpu_shares == 512);
  CHECK(info.cpu_quota == 100000);
  CHECK(info.cpu_period == 100000);
  CHECK(info.memory_limit == 268435456);
  CHECK(*CgroupDirFromCgroupsPath(info.cgroups_path) == info.cgroups_path);
}

TEST_CASE("systemd driver documents of containerd and CRI-O", "[advisor][discover]") {
  const std::string scope_dir =
      "/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod6f2c1d7e_2b1a_4c3e_9d8f_0a1b2c3d4e5f.slice/";
  const RuntimeInfo containerd = Parsed(Fixture("containerd-systemd.json"));
  CHECK(*CgroupDirFromCgroupsPath(containerd.cgroups_path) ==
        scope_dir + "cri-containerd-" + kContainerId + ".scope");
  const RuntimeInfo crio = Parsed(Fixture("crio-systemd.json"));
  CHECK(crio.pid == 14058);
  CHECK(crio.cpu_shares == 512);
  CHECK(crio.memory_limit == 268435456);
  CHECK(*CgroupDirFromCgroupsPath(crio.cgroups_path) ==
        scope_dir + "crio-" + kContainerId + ".scope");
}

TEST_CASE("missing or null optional fields read as 0 / empty", "[advisor][discover]") {
  const RuntimeInfo empty = Parsed("{}");
  CHECK(empty.pid == 0);
  CHECK(empty.cgroups_path.empty());
  CHECK(empty.cpu_shares == 0);
  CHECK(empty.memory_limit == 0);
  // Go writes nil pointers as null.
  CHECK(Parsed(R"({"pid":0,"runtimeSpec":null})").cgroups_path.empty());
  CHECK(Parsed(R"({"runtimeSpec":{"linux":{"resources":null}}})").cpu_quota == 0);
  // A best-effort container: no limits, the kubelet's floor of 2 shares.
  const RuntimeInfo best_effort =
      Parsed(R"({"pid":7,"runtimeSpec":{"linux":{"cgroupsPath":"/kubepods/besteffort/pod1/c",)"
             R"("resources":{"cpu":{"shares":2,"period":100000}}}}})");
  CHECK(best_effort.pid == 7);
  CHECK(best_effort.cpu_shares == 2);
  CHECK(best_effort.cpu_quota == 0);
  CHECK(best_effort.cpu_period == 100000);
  CHECK(best_effort.memory_limit == 0);
  // Unlimited quota as runc writes it.
  CHECK(Parsed(R"({"runtimeSpec":{"linux":{"resources":{"cpu":{"quota":-1}}}}})").cpu_quota == -1);
}

TEST_CASE("wrong types are kDataLoss naming the field path and the value", "[advisor][discover]") {
  const std::string real = Fixture("containerd-1.6-cgroupfs.json");
  CHECK_THAT(Refused(Replace(real, "\"pid\":14058", "\"pid\":\"14058\"")),
             Catch::Contains("pid: expected a process id") && Catch::Contains("\"14058\""));
  CHECK_THAT(Refused(Replace(real, "\"pid\":14058", "\"pid\":-1")), Catch::Contains("pid"));
  CHECK_THAT(Refused(Replace(real, "\"pid\":14058", "\"pid\":1.5")), Catch::Contains("1.5"));
  CHECK_THAT(Refused(Replace(real, "\"shares\":512", "\"shares\":-512")),
             Catch::Contains("runtimeSpec.linux.resources.cpu.shares") && Catch::Contains("-512"));
  CHECK_THAT(Refused(Replace(real, "\"quota\":100000", "\"quota\":true")),
             Catch::Contains("runtimeSpec.linux.resources.cpu.quota") && Catch::Contains("true"));
  CHECK_THAT(Refused(Replace(real, "\"period\":100000", "\"period\":[1]")),
             Catch::Contains("runtimeSpec.linux.resources.cpu.period") &&
                 Catch::Contains("an array of 1 element(s)"));
  CHECK_THAT(
      Refused(Replace(real, "\"limit\":268435456", "\"limit\":\"256Mi\"")),
      Catch::Contains("runtimeSpec.linux.resources.memory.limit") && Catch::Contains("\"256Mi\""));
  CHECK_THAT(Refused(R"({"runtimeSpec":{"linux":{"cgroupsPath":42}}})"),
             Catch::Contains("runtimeSpec.linux.cgroupsPath") && Catch::Contains("42"));
  CHECK_THAT(Refused(R"({"runtimeSpec":"spec"})"),
             Catch::Contains("runtimeSpec: expected an object"));
  CHECK_THAT(Refused(R"({"runtimeSpec":{"linux":[]}})"), Catch::Contains("runtimeSpec.linux:"));
  CHECK_THAT(Refused(R"({"runtimeSpec":{"linux":{"resources":{"memory":5}}}})"),
             Catch::Contains("runtimeSpec.linux.resources.memory:"));
  // A pid above what Linux allows, and shares past uint64.
  CHECK_THAT(Refused(R"({"pid":4294967296})"), Catch::Contains("4294967296"));
  CHECK_THAT(Refused(R"({"runtimeSpec":{"linux":{"resources":{"cpu":{"shares":1e30}}}}})"),
             Catch::Contains("shares"));
}

TEST_CASE("documents that are not a JSON object are kDataLoss", "[advisor][discover]") {
  CHECK_THAT(Refused(""), Catch::Contains("not JSON"));
  CHECK_THAT(Refused("{\"pid\":"), Catch::Contains("not JSON"));
  CHECK_THAT(Refused("[]"), Catch::Contains("expected an object"));
  CHECK_THAT(Refused("null"), Catch::Contains("expected an object"));
  const std::string real = Fixture("containerd-1.6-cgroupfs.json");
  CHECK_THAT(Refused(real.substr(0, real.size() / 2)), Catch::Contains("not JSON"));
  // A long wrong value is shown cut short, with its length.
  CHECK_THAT(Refused(R"({"pid":")" + std::string(1000, 'x') + "\"}"),
             Catch::Contains("(1002 bytes)"));
  // Deep nesting is parsed iteratively (no stack exhaustion) and refused as a wrong type.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_THAT(Refused(R"({"runtimeSpec":)" + deep + "}"),
             Catch::Contains("runtimeSpec: expected an object, found an array of 1 element(s)"));
}

}  // namespace
}  // namespace qrm::advisor
