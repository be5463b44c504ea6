// ContainerDirectory against a real containerd 1.6 + runc (cgroupfs driver, cgroup v1): the
// busybox container of a pod is found with its pod's identity, its requests and limits, and a
// cgroup path under which the real cpuacct and memory directories exist and hold its pid; the
// path agrees with the pid's /proc/<pid>/cgroup. Root only.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "advisor/discover/cgroup_path.h"
#include "advisor/discover/container_directory.h"
#include "advisor/sample/cgroup_usage.h"
#include "testing/e2e/containerd.h"
#include "testing/e2e/cri_client.h"
#include "testing/e2e/host.h"

namespace {

using qrm::advisor::ContainerDirectory;
using qrm::advisor::ContainerEntry;
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

// The pids listed in a cgroup v1 directory's cgroup.procs.
std::vector<int64_t> CgroupProcs(const std::string& dir) {
  std::ifstream in(dir + "/cgroup.procs");
  std::vector<int64_t> pids;
  for (int64_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

const ContainerEntry* Find(const std::vector<ContainerEntry>& list, const std::string& id) {
  const auto it = std::find_if(list.begin(), list.end(),
                               [&id](const ContainerEntry& e) { return e.container_id == id; });
  return it == list.end() ? nullptr : &*it;
}

void CheckCgroupHoldsPid(const ContainerEntry& entry, const std::string& controller) {
  const std::string mount = qrm::e2e::CgroupV1Mount(controller);
  REQUIRE_FALSE(mount.empty());
  const std::string dir = mount + entry.cgroup_path;
  INFO(controller << " directory " << dir);
  REQUIRE(fs::is_directory(dir));
  const std::vector<int64_t> procs = CgroupProcs(dir);
  CHECK(std::find(procs.begin(), procs.end(), entry.pid) != procs.end());
  // The process's own view agrees.
  const auto from_proc = qrm::advisor::ProcessCgroup("/proc", entry.pid, controller);
  REQUIRE_OK(from_proc);
  CHECK(*from_proc == entry.cgroup_path);
}

}  // namespace

TEST_CASE("ContainerDirectory finds a real container and its cgroup v1 directories") {
  if (::geteuid() != 0) {
    WARN("not root: e2e test skipped");
    return;
  }
  if (qrm::e2e::CgroupV1Mount("cpuacct").empty()) {
    WARN("no cgroup v1 cpuacct hierarchy: skipped");
    return;
  }
  auto c = qrm::e2e::Containerd::Start();
  REQUIRE_OK(c);
  qrm::e2e::CriClient cri = (*c)->Client();
  const auto pod = cri.RunHostNetworkPod("web-0", "6f2c1d7e-uid-discover", "shop");
  REQUIRE_OK(pod);
  qrm::e2e::ContainerSpec spec;
  spec.name = "app";
  spec.cpu_shares = 512;  // the kubelet's 500m
  spec.cpu_quota = 150000;
  spec.cpu_period = 100000;
  spec.memory_limit_in_bytes = 256 << 20;
  const auto id = cri.CreateAndStartContainer(*pod, spec);
  REQUIRE_OK(id);

  ContainerDirectory directory(qrm::advisor::RuntimeChannel("unix://" + (*c)->socket()));
  const auto list = directory.Refresh();
  REQUIRE_OK(list);
  REQUIRE(list->size() == 1);  // the sandbox's own container is not listed
  const ContainerEntry* app = Find(*list, *id);
  REQUIRE(app != nullptr);
  CHECK(app->pod_uid == "6f2c1d7e-uid-discover");
  CHECK(app->pod_name == "web-0");
  CHECK(app->pod_namespace == "shop");
  CHECK(app->container_name == "app");
  CHECK(app->cpu_request_cores == 0.5);
  CHECK(app->cpu_limit_cores == 1.5);
  CHECK(app->memory_limit_bytes == 256 << 20);
  REQUIRE(app->pid > 0);
  CHECK(app->cgroup_path == (*c)->cgroup_root() + "/pod6f2c1d7e-uid-discover/" + *id);
  CheckCgroupHoldsPid(*app, "cpuacct");
  CheckCgroupHoldsPid(*app, "memory");
  // What the sampler reads there.
  const qrm::advisor::CgroupReader reader("/sys/fs/cgroup", qrm::advisor::CgroupVersion::kV1);
  REQUIRE_OK(reader.Read(app->cgroup_path));

  // A second container joins; the first is not asked again; a removed one is dropped.
  spec.name = "side";
  spec.cpu_shares = 2;
  spec.cpu_quota = spec.cpu_period = spec.memory_limit_in_bytes = 0;
  const auto side = cri.CreateAndStartContainer(*pod, spec);
  REQUIRE_OK(side);
  const auto two = directory.Refresh();
  REQUIRE_OK(two);
  REQUIRE(two->size() == 2);
  CHECK(Find(*two, *side)->cpu_request_cores == 0);
  CHECK(Find(*two, *side)->cpu_limit_cores == 0);
  CHECK(directory.cached() == 2);
  REQUIRE_OK(cri.StopAndRemoveContainer(*side));
  const auto one = directory.Refresh();
  REQUIRE_OK(one);
  CHECK(one->size() == 1);
  CHECK(directory.cached() == 1);
  CHECK(directory.skipped_total() == 0);

  CHECK((*c)->Stop().empty());
  // containerd gone: the refresh fails as a whole.
  const auto gone = directory.Refresh();
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.status().code() == qrm::StatusCode::kUnavailable);
}
