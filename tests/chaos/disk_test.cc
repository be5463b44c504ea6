// Disk full / read-only state directory: qrm-host keeps its checkpoint on a small tmpfs the
// test mounts. When a pod file cannot be written, the admission fails with a clear error
// and nothing is half-applied (no container, no allocation in the host or the plugins);
// once space (or write access) returns, admission works again.
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

// The admission of a new dedicated pod fails with `error` in its message and leaves
// nothing behind; returns the pod, whose sandbox stays for the retry.
e2e::Pod RefusedAdmission(e2e::NodeFixture& node, e2e::CriClient& shim, e2e::CriClient& direct,
                          const std::string& name, const std::string& error) {
  auto pod = shim.RunHostNetworkPod(name, name + "-uid", "chaos", e2e::Qos("dedicated_cores"));
  REQUIRE(pod.ok());
  auto id = shim.CreateContainer(*pod, e2e::OneCpu("main"));
  REQUIRE_FALSE(id.ok());
  WARN("admission with the state dir " << error << ": " << id.status().ToString());
  CHECK_THAT(id.status().message(), Catch::Contains(error));
  e2e::cri::ListContainersResponse containers;
  REQUIRE(direct.runtime().ListContainers(direct.Context().get(), {}, &containers).ok());
  for (const auto& c : containers.containers()) CHECK(c.pod_sandbox_id() != pod->id);
  auto allocations = node.Allocations();
  REQUIRE(allocations.ok());
  for (const auto& p : allocations->pods()) CHECK(p.uid() != name + "-uid");
  auto held = PluginPods(node);
  REQUIRE(held.ok());
  CHECK_FALSE(held->contains(name + "-uid"));
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
    e2e::Pod pod = RefusedAdmission(node, shim, direct, "full", "No space left on device");
    REQUIRE(::unlink(filler.c_str()) == 0);
    auto id = shim.CreateAndStartContainer(pod, e2e::OneCpu("main"));
    INFO(id.status().ToString());
    CHECK(id.ok());
  }
  SECTION("read-only") {
    fs.Remount("ro");
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
