// Disk full / read-only state directory: qrm-host keeps its checkpoint on a small tmpfs the
// test mounts. When its journal cannot take an admission's record, the admission fails with a
// clear error and nothing is half-applied (no container, no allocation in the host or the
// plugins); once space (or write access) returns, admission works again.
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testing/subprocess.h"
#include "tests/chaos/chaos_env.h"
#include "tests/chaos/invariants.h"

namespace qrm::chaos {
namespace {

using std::chrono::milliseconds;

// A tmpfs mounted (through the mount binary, never a shell) for the test's lifetime.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(std::string dir) : dir_(std::move(dir)) {
    ::mkdir(dir_.c_str(), 0700);
    Run({"-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", dir_});
  }
  ~SmallTmpfs() { (void)testing::RunProcess({testing::FindExecutable("umount"), "-l", dir_}); }
  void Remount(const std::string& mode) { Run({"-o", "remount," + mode, dir_}); }
  const std::string& dir() const { return dir_; }

 private:
  static void Run(std::vector<std::string> args) {
    const std::string mount = testing::FindExecutable("mount");
    REQUIRE_FALSE(mount.empty());
    args.insert(args.begin(), mount);
    auto r = testing::RunProcess(args);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
  }
  std::string dir_;
};

// Writes `path` until the file system is full.
void Fill(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  const std::string block(4096, 'x');
  while (::write(fd, block.data(), block.size()) > 0) {
  }
  CHECK(errno == ENOSPC);
  ::close(fd);
}

// `refused`, the admission of pod `name`'s container, failed with `error` in its message and
// left nothing behind.
void CheckRefused(e2e::NodeFixture& node, e2e::CriClient& direct, const e2e::Pod& pod,
                  const std::string& name, const Status& refused, const std::string& error) {
  REQUIRE_FALSE(refused.ok());
  WARN("admission with the state dir " << error << ": " << refused.ToString());
  CHECK_THAT(refused.message(), Catch::Contains(error));
  e2e::cri::ListContainersResponse containers;
  REQUIRE(direct.runtime().ListContainers(direct.Context().get(), {}, &containers).ok());
  for (const auto& c : containers.containers()) CHECK(c.pod_sandbox_id() != pod.id);
  auto allocations = node.Allocations();
  REQUIRE(allocations.ok());
  for (const auto& p : allocations->pods()) CHECK(p.uid() != name + "-uid");
  auto held = PluginPods(node);
  REQUIRE(held.ok());
  CHECK_FALSE(held->contains(name + "-uid"));
}

// The admission of a new dedicated pod fails with `error` in its message and leaves
// nothing behind; returns the pod, whose sandbox stays for the retry.
e2e::Pod RefusedAdmission(e2e::NodeFixture& node, e2e::CriClient& shim, e2e::CriClient& direct,
                          const std::string& name, const std::string& error) {
  auto pod = shim.RunHostNetworkPod(name, name + "-uid", "chaos", e2e::Qos("dedicated_cores"));
  REQUIRE(pod.ok());
  auto id = shim.CreateContainer(*pod, e2e::OneCpu("main"));
  CheckRefused(node, direct, *pod, name, id.status(), error);
  return *pod;
}

TEST_CASE("a full or read-only state dir refuses admissions cleanly and recovers") {
  if (!Root()) return;
  e2e::NodeFixture node;
  SmallTmpfs fs(node.File("statefs"));
  StartNode(node, fs.dir() + "/state");
  e2e::CriClient shim = node.Shim();
  e2e::CriClient direct = node.Direct();

  SECTION("disk full") {
    const std::string filler = fs.dir() + "/filler";
    Fill(filler);
    // The journal's last page may still hold a record or two: admissions go on (durably)
    // until it is full, then one is refused.
    std::optional<e2e::Pod> refused;
    for (int i = 0; i < 20 && !refused; ++i) {
      const std::string name = "full-" + std::to_string(i);
      auto pod = shim.RunHostNetworkPod(name, name + "-uid", "chaos", e2e::Qos("shared_cores"));
      REQUIRE(pod.ok());
      auto id = shim.CreateContainer(*pod, e2e::OneCpu("main"));
      if (id.ok()) continue;
      CheckRefused(node, direct, *pod, name, id.status(), "No space left on device");
      refused = *pod;
    }
    REQUIRE(refused);
    REQUIRE(::unlink(filler.c_str()) == 0);
    auto id = shim.CreateAndStartContainer(*refused, e2e::OneCpu("main"));
    INFO(id.status().ToString());
    CHECK(id.ok());
  }
  SECTION("read-only") {
    // An administrative remount waits for writers; a kernel that remounts a failing disk
    // read-only does not, and the host's next write fails as it does on a host started here.
    node.KillHost();
    fs.Remount("ro");
    node.StartHost(HostFlags(), fs.dir() + "/state");  // starts: the CRI must pass through
    REQUIRE(node.WaitReady());
    e2e::Pod pod = RefusedAdmission(node, shim, direct, "readonly", "Read-only file system");
    fs.Remount("rw");
    auto id = shim.CreateAndStartContainer(pod, e2e::OneCpu("main"));
    INFO(id.status().ToString());
    CHECK(id.ok());
  }
  std::vector<std::string> violations;
  const bool consistent = WaitConsistent(node, direct, milliseconds(5000), &violations);
  if (!consistent) UNSCOPED_INFO(Join(violations) << node.Logs());
  CHECK(consistent);
}

}  // namespace
}  // namespace qrm::chaos
