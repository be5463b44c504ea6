// The e2e harness against a real containerd 1.6 + runc: each TEST_CASE starts its own
// containerd (own temp dir, socket, cgroup root), and checks that it leaves nothing behind.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "testing/e2e/busybox_image.h"
#include "testing/e2e/containerd.h"
#include "testing/e2e/cri_client.h"
#include "testing/e2e/host.h"
#include "testing/e2e/sha256.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace {

using qrm::e2e::Containerd;
using qrm::e2e::ContainerSpec;
using qrm::e2e::CriClient;
namespace cri = qrm::e2e::cri;
namespace fs = std::filesystem;

std::string Describe(const qrm::Status& s) {
  return s.ToString();
}
template <typename T>
std::string Describe(const qrm::StatusOr<T>& s) {
  return s.status().ToString();
}

#define REQUIRE_OK(expr)     \
  do {                       \
    const auto& r_ = (expr); \
    INFO(Describe(r_));      \
    REQUIRE(r_.ok());        \
  } while (0)

// e2e tests need root and the Debian packages scripts/install-deps installs.
bool E2eEnvironment() {
  if (::geteuid() != 0) {
    WARN("not root: e2e test skipped");
    return false;
  }
  return true;
}

std::vector<std::string> MountPoints() {
  std::vector<std::string> points;
  for (const auto& m : qrm::e2e::ReadMounts()) points.push_back(m.mount_point);
  std::sort(points.begin(), points.end());
  return points;
}

// What one containerd instance could leak, recorded while it runs and checked after.
struct Footprint {
  std::string dir;
  std::string socket;
  std::string cgroup_root;
  std::vector<pid_t> shims;

  void Record(const Containerd& c) {
    dir = c.dir();
    socket = c.socket();
    cgroup_root = c.cgroup_root();
    shims = qrm::e2e::PidsWithArgument(c.socket());
  }

  void CheckGone() const {
    REQUIRE(!dir.empty());
    CHECK_FALSE(fs::exists(dir));
    CHECK(qrm::e2e::PidsWithArgument(socket).empty());
    for (pid_t pid : shims) {
      INFO("shim pid " << pid);
      CHECK_FALSE(qrm::e2e::ProcessAlive(pid));
    }
    for (const std::string& mount : qrm::e2e::CgroupMounts()) {
      INFO("cgroup hierarchy " << mount);
      CHECK_FALSE(fs::exists(mount + cgroup_root));
    }
    CHECK(qrm::e2e::MountPointsUnder(dir).empty());
  }
};

}  // namespace

TEST_CASE("SHA-256 matches the published vectors and sha256sum") {
  CHECK(qrm::e2e::Sha256Hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(qrm::e2e::Sha256Hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(qrm::e2e::Sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  qrm::testing::TempDir dir;
  std::string data;
  for (int i = 0; i < 100000; ++i) data.push_back(static_cast<char>(i * 7 + (i >> 8)));
  qrm::testing::WriteFile(dir.File("blob"), data);
  const qrm::testing::ProcessResult r = qrm::testing::RunProcess({"sha256sum", dir.File("blob")});
  REQUIRE(r.exit_code == 0);
  const auto hex = qrm::e2e::Sha256FileHex(dir.File("blob"));
  REQUIRE_OK(hex);
  CHECK(r.output.substr(0, 64) == *hex);
}

TEST_CASE("busybox image build is reproducible") {
  if (qrm::e2e::HostBusybox().empty()) {
    WARN("no /bin/busybox: skipped");
    return;
  }
  qrm::testing::TempDir a, b;
  const auto first = qrm::e2e::BuildBusyboxImage(a.path(), qrm::e2e::kBusyboxImage);
  const auto second = qrm::e2e::BuildBusyboxImage(b.path(), qrm::e2e::kBusyboxImage);
  REQUIRE_OK(first);
  REQUIRE_OK(second);
  CHECK(first->index_digest == second->index_digest);
  CHECK(first->config_digest == second->config_digest);
  const auto listing = qrm::testing::RunProcess({"tar", "--list", "--file", first->tar_path});
  REQUIRE(listing.exit_code == 0);
  CHECK(listing.output.find("oci-layout") != std::string::npos);
  CHECK(listing.output.find("index.json") != std::string::npos);
  CHECK(listing.output.find("blobs/sha256/" + first->manifest_digest.substr(7)) !=
        std::string::npos);
}

TEST_CASE("containerd answers Version and lists the imported image") {
  if (!E2eEnvironment()) return;
  Footprint footprint;
  {
    auto c = Containerd::Start();
    REQUIRE_OK(c);
    footprint.Record(**c);
    CriClient cri = (*c)->Client();

    const auto version = cri.Version();
    REQUIRE_OK(version);
    CHECK(version->runtime_name() == "containerd");
    CHECK(version->runtime_api_version() == "v1");
    CHECK(version->runtime_version().rfind("1.", 0) == 0);

    const auto images = cri.ListImages();
    REQUIRE_OK(images);
    // The image id CRI reports is the config digest, which a fresh build reproduces.
    qrm::testing::TempDir scratch;
    const auto built = qrm::e2e::BuildBusyboxImage(scratch.path(), qrm::e2e::kBusyboxImage);
    REQUIRE_OK(built);
    const auto it = std::find_if(images->begin(), images->end(), [](const cri::Image& image) {
      return std::find(image.repo_tags().begin(), image.repo_tags().end(),
                       qrm::e2e::kBusyboxImage) != image.repo_tags().end();
    });
    REQUIRE(it != images->end());
    CHECK(it->id() == built->config_digest);
    CHECK(it->size() > 0);

    CHECK((*c)->Stop().empty());
  }
  footprint.CheckGone();
}

TEST_CASE("host-network pod: cpuset applied at create and updated in place") {
  if (!E2eEnvironment()) return;
  if (qrm::e2e::UsableCpus() < 2) {
    WARN("needs 2 CPUs: skipped");
    return;
  }
  const bool system_state_existed = fs::exists("/run/containerd");
  const std::vector<std::string> mounts_before = MountPoints();
  Footprint footprint;
  {
    auto c = Containerd::Start();
    REQUIRE_OK(c);
    Containerd& containerd = **c;
    INFO("containerd dir " << containerd.dir() << ", snapshotter " << containerd.snapshotter());
    CriClient cri = containerd.Client();

    const auto pod =
        cri.RunHostNetworkPod("smoke", "0d5c9a1e-uid-smoke", "default", {{"qrm.io/e2e", "smoke"}});
    REQUIRE_OK(pod);
    ContainerSpec spec;
    spec.name = "work";
    spec.cpuset_cpus = "0";
    const auto id = cri.CreateAndStartContainer(*pod, spec);
    REQUIRE_OK(id);
    footprint.Record(containerd);
    CHECK_FALSE(footprint.shims.empty());

    // Host network: the container shares this process's network namespace.
    const auto netns = cri.ExecSync(*id, {"readlink", "/proc/self/ns/net"});
    REQUIRE_OK(netns);
    CHECK(*netns == fs::read_symlink("/proc/self/ns/net").string() + "\n");

    // The cgroup is the pod's, under this instance's cgroup root.
    const auto info = cri.ContainerInfo(*id);
    REQUIRE_OK(info);
    CHECK(info->pid > 0);
    CHECK(info->cgroups_path.rfind(containerd.cgroup_root() + "/pod", 0) == 0);

    const auto status0 = cri.ExecSync(*id, {"cat", "/proc/self/status"});
    REQUIRE_OK(status0);
    CHECK(qrm::e2e::CpusAllowedList(*status0) == "0");
    const auto cgroup0 = cri.ContainerCgroupCpus(*id);
    REQUIRE_OK(cgroup0);
    CHECK(*cgroup0 == "0");

    REQUIRE_OK(cri.UpdateContainerCpuset(*id, "1"));
    const auto status1 = cri.ExecSync(*id, {"cat", "/proc/self/status"});
    REQUIRE_OK(status1);
    CHECK(qrm::e2e::CpusAllowedList(*status1) == "1");
    const auto cgroup1 = cri.ContainerCgroupCpus(*id);
    REQUIRE_OK(cgroup1);
    CHECK(*cgroup1 == "1");
    const auto reported = cri.ContainerStatus(*id);
    REQUIRE_OK(reported);
    CHECK(reported->status().resources().linux().cpuset_cpus() == "1");

    REQUIRE_OK(cri.StopAndRemoveContainer(*id));
    REQUIRE_OK(cri.StopAndRemovePod(pod->id));
    cri::ListPodSandboxResponse pods;
    REQUIRE(cri.runtime().ListPodSandbox(cri.Context().get(), {}, &pods).ok());
    CHECK(pods.items_size() == 0);

    CHECK(containerd.Stop().empty());
  }
  footprint.CheckGone();
  CHECK(MountPoints() == mounts_before);
  if (!system_state_existed) CHECK_FALSE(fs::exists("/run/containerd"));
}

TEST_CASE("destruction alone cleans up running pods (a test that fails midway)") {
  if (!E2eEnvironment()) return;
  const std::vector<std::string> mounts_before = MountPoints();
  Footprint footprint;
  {
    auto c = Containerd::Start();
    REQUIRE_OK(c);
    CriClient cri = (*c)->Client();
    for (const char* name : {"left-a", "left-b"}) {
      const auto pod = cri.RunHostNetworkPod(name, std::string("uid-") + name, "default");
      REQUIRE_OK(pod);
      ContainerSpec spec;
      spec.name = "sleeper";
      REQUIRE_OK(cri.CreateAndStartContainer(*pod, spec));
    }
    footprint.Record(**c);
    CHECK(footprint.shims.size() >= 2);
    // No explicit cleanup: ~Containerd must remove both pods and stop everything.
  }
  footprint.CheckGone();
  CHECK(MountPoints() == mounts_before);
}

TEST_CASE("a containerd that cannot serve fails Start with its log and cleans up") {
  if (!E2eEnvironment()) return;
  qrm::e2e::ContainerdOptions options;
  options.snapshotter = "no-such-snapshotter";
  options.import_busybox = false;
  const auto c = Containerd::Start(options);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().message().find("no-such-snapshotter") != std::string::npos);
}
