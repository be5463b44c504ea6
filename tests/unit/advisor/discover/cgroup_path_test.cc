// OCI cgroupsPath -> cgroup directory (cgroupfs as is, systemd's "slice:prefix:name" by runc's
// rules), the paths refused (naming the value), and the /proc/<pid>/cgroup fallback on v1,
// v2 and hybrid files.
#include "advisor/discover/cgroup_path.h"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "testing/temp_dir.h"

namespace qrm::advisor {
namespace {

std::string Dir(std::string_view cgroups_path) {
  StatusOr<std::string> dir = CgroupDirFromCgroupsPath(cgroups_path);
  INFO(dir.status().ToString());
  REQUIRE(dir.ok());
  return *dir;
}

// The error's message, checked to be kInvalidArgument naming the value.
std::string Refused(std::string_view cgroups_path) {
  StatusOr<std::string> dir = CgroupDirFromCgroupsPath(cgroups_path);
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(dir.status().message(), Catch::Contains("cgroupsPath \""));
  return dir.status().message();
}

TEST_CASE("cgroupfs cgroupsPath is the directory itself", "[advisor][discover]") {
  CHECK(Dir("/kubepods/burstable/pod6f2c1d7e/0123abcd") ==
        "/kubepods/burstable/pod6f2c1d7e/0123abcd");
  CHECK(Dir("/kubepods/pod1/c1") == "/kubepods/pod1/c1");
  // What containerd 1.6 gives the e2e pods (cgroup_parent + container id).
  CHECK(Dir("/qrm-e2e-AbC123/podx/5e1f") == "/qrm-e2e-AbC123/podx/5e1f");
  CHECK(Dir("/") == "/");
  // ':' is an ordinary character in a cgroupfs path.
  CHECK(Dir("/a:b:c") == "/a:b:c");
}

TEST_CASE("systemd cgroupsPath: slice expanded into its parents, then the scope",
          "[advisor][discover]") {
  CHECK(Dir("kubepods-burstable-pod123.slice:cri-containerd:abc") ==
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod123.slice/"
        "cri-containerd-abc.scope");
  CHECK(Dir("kubepods-pod9_8.slice:crio:f00") ==
        "/kubepods.slice/kubepods-pod9_8.slice/crio-f00.scope");
  CHECK(Dir("system.slice:docker:1234") == "/system.slice/docker-1234.scope");
  // runc: an empty slice is system.slice; "-.slice" is the root.
  CHECK(Dir(":runc:x") == "/system.slice/runc-x.scope");
  CHECK(Dir("-.slice:p:x") == "/p-x.scope");
  // A name that is a slice is the unit itself; the prefix is not used.
  CHECK(Dir("kubepods.slice:ignored:kubepods-besteffort.slice") ==
        "/kubepods.slice/kubepods-besteffort.slice");
}

TEST_CASE("ExpandSystemdSlice follows runc", "[advisor][discover]") {
  CHECK(*ExpandSystemdSlice("test-a-b.slice") == "/test.slice/test-a.slice/test-a-b.slice");
  CHECK(*ExpandSystemdSlice("user.slice") == "/user.slice");
  CHECK(*ExpandSystemdSlice("-.slice") == "/");
  for (const char* bad : {"test--a.slice", "-test.slice", "test-.slice", ".slice", "test",
                          "a/b.slice", "slice", ""}) {
    INFO(bad);
    const StatusOr<std::string> path = ExpandSystemdSlice(bad);
    REQUIRE_FALSE(path.ok());
    CHECK(path.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(path.status().message(), Catch::Contains(std::string("\"") + bad + "\""));
  }
}

TEST_CASE("cgroupsPath values that cannot name a directory are refused, naming the value",
          "[advisor][discover]") {
  CHECK_THAT(Refused(""), Catch::Contains("empty"));
  CHECK_THAT(Refused("/kubepods/../etc"), Catch::Contains("\"..\" component"));
  CHECK_THAT(Refused("/kubepods/./x"), Catch::Contains("\".\" component"));
  CHECK_THAT(Refused("/kubepods//x"), Catch::Contains("empty component"));
  CHECK_THAT(Refused("/kubepods/x/"), Catch::Contains("empty component"));
  CHECK_THAT(Refused(std::string("/kubepods/x\0y", 13)), Catch::Contains("control character"));
  // Relative: runc would resolve it against its own cgroup.
  CHECK_THAT(Refused("kubepods/pod1/c1"), Catch::Contains("\"kubepods/pod1/c1\""));
  CHECK_THAT(Refused("a:b"), Catch::Contains("slice:prefix:name"));
  CHECK_THAT(Refused("a.slice:b:c:d"), Catch::Contains("slice:prefix:name"));
  // systemd form with a bad slice or unit.
  CHECK_THAT(Refused("kubepods--x.slice:cri-containerd:abc"), Catch::Contains("empty component"));
  CHECK_THAT(Refused("kubepods:cri-containerd:abc"), Catch::Contains("does not end in"));
  CHECK_THAT(Refused("kubepods.slice:cri-containerd:"), Catch::Contains("unit name is empty"));
  CHECK_THAT(Refused("kubepods.slice:cri-containerd:a/b"), Catch::Contains("'/'"));
  // Past PATH_MAX, directly or by a slice's expansion (which grows with the square of its
  // '-' count).
  CHECK_THAT(Refused("/" + std::string(4096, 'a')), Catch::Contains("longer than 4096"));
  std::string dashes = "a";
  for (int i = 0; i < 1000; ++i) dashes += "-a";
  CHECK_THAT(Refused(dashes + ".slice:p:x"), Catch::Contains("longer than 4096"));
}

// Real files of a cgroup v1 host (this repository's e2e machines) and of a v2 host.
constexpr const char* kV1ProcCgroup =
    "12:pids:/qrm-e2e-AbC/pod1/c1\n"
    "11:cpu,cpuacct:/qrm-e2e-AbC/pod1/c1\n"
    "10:memory:/qrm-e2e-AbC/pod1/c1\n"
    "9:cpuset:/qrm-e2e-AbC/pod1/c1\n"
    "1:name=systemd:/system.slice/containerd.service\n"
    "0::/system.slice/containerd.service\n";
constexpr const char* kV2ProcCgroup =
    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/"
    "cri-containerd-c1.scope\n";

TEST_CASE("/proc/<pid>/cgroup: the line of a v1 controller, else the unified one",
          "[advisor][discover]") {
  CHECK(*CgroupFromProcFile(kV1ProcCgroup, "cpuacct", "f") == "/qrm-e2e-AbC/pod1/c1");
  CHECK(*CgroupFromProcFile(kV1ProcCgroup, "memory", "f") == "/qrm-e2e-AbC/pod1/c1");
  // The named systemd hierarchy is not a controller "systemd".
  CHECK(*CgroupFromProcFile(kV1ProcCgroup, "systemd", "f") == "/system.slice/containerd.service");
  CHECK(*CgroupFromProcFile(kV1ProcCgroup, "", "f") == "/system.slice/containerd.service");
  // v2: no v1 hierarchy holds cpuacct, so the unified line.
  CHECK(*CgroupFromProcFile(kV2ProcCgroup, "cpuacct", "f") ==
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/"
        "cri-containerd-c1.scope");
  CHECK(*CgroupFromProcFile("0::/\n", "memory", "f") == "/");
}

TEST_CASE("/proc/<pid>/cgroup: missing, removed, foreign and malformed lines",
          "[advisor][discover]") {
  const auto code = [](std::string_view content, std::string_view controller) {
    return CgroupFromProcFile(content, controller, "/proc/7/cgroup").status().code();
  };
  CHECK(code("11:cpu,cpuacct:/a\n", "memory") == StatusCode::kNotFound);
  CHECK(code("", "cpuacct") == StatusCode::kNotFound);
  CHECK(code("0::/kubepods/x (deleted)\n", "") == StatusCode::kNotFound);
  CHECK(code("0::/../../system.slice/x\n", "") == StatusCode::kDataLoss);
  CHECK(code("0::/a//b\n", "") == StatusCode::kDataLoss);
  CHECK(code("0::relative\n", "") == StatusCode::kDataLoss);
  CHECK(code("garbage\n", "cpuacct") == StatusCode::kDataLoss);
  CHECK(code("x:cpu:/a\n", "cpu") == StatusCode::kDataLoss);
  const auto bad = CgroupFromProcFile("12:pids\n", "pids", "/proc/7/cgroup");
  CHECK_THAT(bad.status().message(),
             Catch::Contains("/proc/7/cgroup") && Catch::Contains("\"12:pids\""));
  // A cgroup path may hold ':'.
  CHECK(*CgroupFromProcFile("3:memory:/a:b\n", "memory", "f") == "/a:b");
}

TEST_CASE("ProcessCgroup reads <procfs-root>/<pid>/cgroup", "[advisor][discover]") {
  qrm::testing::TempDir procfs;
  std::filesystem::create_directories(procfs.File("42"));
  std::ofstream(procfs.File("42/cgroup")) << kV1ProcCgroup;
  CHECK(*ProcessCgroup(procfs.path(), 42, "cpuacct") == "/qrm-e2e-AbC/pod1/c1");
  CHECK(ProcessCgroup(procfs.path(), 43, "cpuacct").status().code() == StatusCode::kNotFound);
  CHECK(ProcessCgroup(procfs.path(), 0, "cpuacct").status().code() == StatusCode::kInvalidArgument);
  // This very process, on the real procfs: some line always answers.
  CHECK(ProcessCgroup("/proc", ::getpid(), "memory").ok());
}

}  // namespace
}  // namespace qrm::advisor
