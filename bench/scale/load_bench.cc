// load_bench: 100 pods started concurrently through the CRI shim (qrm-host with the three real
// plugins) on a real containerd, then the same load directly against containerd (fresh pod
// names), same run (issue 7, "Scale").
//
// Each pod is RunPodSandbox + CreateContainer + StartContainer, from --threads client threads.
// Most pods are shared_cores (100m CPU, 32 MiB); --dedicated of them are dedicated_cores with
// one whole CPU. On a small machine most dedicated pods cannot get an exclusive CPU: qrm
// refuses them (RESOURCE_EXHAUSTED), which is counted apart from errors. Then the exclusive
// CPUs are checked against every other container's cpuset, both as qrm's allocations say and
// as the cgroups hold them after two reconcile periods. Every pod is removed afterwards.
//
//   LOAD_shim <s> s                   wall time of the load through the shim
//   LOAD_direct <s> s ratio=<shim/direct>
//   LOAD_errors <n> count             failed calls other than capacity refusals (both runs)
//   LOAD_refused <n> count            capacity refusals (through the shim)
//   LOAD_overlaps <n> count           (exclusive container, other container) pairs sharing a CPU
//
// Needs root. Flags: --pods N (100), --threads N (16), --dedicated N (4), --only ID.
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench/scale/bench_args.h"
#include "bench/scale/bench_node.h"
#include "bench/scale/parallel_for.h"
#include "common/cpu_set.h"
#include "common/log.h"

namespace {

using namespace qrm::bench;
using Clock = std::chrono::steady_clock;
using qrm::CpuSet;

constexpr char kQosAnnotation[] = "katalyst.kubewharf.io/qos_level";

struct StartedContainer {
  std::string pod_name;
  std::string container_id;
  bool dedicated = false;
};

// What one run of the load produced.
struct LoadResult {
  double seconds = 0;
  int errors = 0;
  int refused = 0;
  std::vector<std::string> first_errors;  // a few, for the notes
  std::vector<std::string> sandboxes;     // every sandbox started, refused pods' included
  std::vector<StartedContainer> started;
};

bool Dedicated(int index, const BenchArgs& args) {
  const int dedicated = args.Int("dedicated");
  if (dedicated == 0) return false;
  const int stride = std::max(1, args.Int("pods") / dedicated);
  return index % stride == 0 && index / stride < dedicated;
}

qrm::e2e::ContainerSpec MainContainer(bool dedicated) {
  qrm::e2e::ContainerSpec spec;
  spec.name = "main";
  if (dedicated) {  // one CPU, as the kubelet encodes a 1-CPU guaranteed container
    spec.cpu_shares = 1024;
    spec.cpu_period = 100000;
    spec.cpu_quota = 100000;
    spec.memory_limit_in_bytes = 64LL << 20;
  } else {
    spec.cpu_shares = 102;
    spec.memory_limit_in_bytes = 32LL << 20;
  }
  return spec;
}

// Starts --pods pods named "<prefix>-<i>" through `cri` from --threads threads.
LoadResult RunLoad(qrm::e2e::CriClient& cri, const std::string& prefix, const BenchArgs& args) {
  LoadResult result;
  std::mutex mu;
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    if (++result.errors <= 3) result.first_errors.push_back(what);
  };
  const auto start = Clock::now();
  ParallelFor(args.Int("pods"), args.Int("threads"), [&](int i) {
    const bool dedicated = Dedicated(i, args);
    const std::string name = prefix + "-" + std::to_string(i);
    auto pod =
        cri.RunHostNetworkPod(name, name + "-uid", "bench-load",
                              {{kQosAnnotation, dedicated ? "dedicated_cores" : "shared_cores"}});
    if (!pod.ok()) return fail(name + ": " + pod.status().ToString());
    {
      std::lock_guard<std::mutex> lock(mu);
      result.sandboxes.push_back(pod->id);
    }
    auto id = cri.CreateContainer(*pod, MainContainer(dedicated));
    if (!id.ok()) {
      if (dedicated && id.status().code() == qrm::StatusCode::kResourceExhausted) {
        std::lock_guard<std::mutex> lock(mu);
        ++result.refused;
        return;
      }
      return fail(name + ": " + id.status().ToString());
    }
    if (qrm::Status s = cri.StartContainer(*id); !s.ok()) return fail(name + ": " + s.ToString());
    std::lock_guard<std::mutex> lock(mu);
    result.started.push_back({name, *id, dedicated});
  });
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

void RemovePods(qrm::e2e::CriClient& cri, const LoadResult& load, const BenchArgs& args,
                int* errors) {
  std::mutex mu;
  ParallelFor(static_cast<int>(load.sandboxes.size()), args.Int("threads"), [&](int i) {
    if (!cri.StopAndRemovePod(load.sandboxes[static_cast<size_t>(i)]).ok()) {
      std::lock_guard<std::mutex> lock(mu);
      ++*errors;
    }
  });
}

struct NamedCpus {
  std::string name;
  CpuSet cpus;
  bool exclusive = false;
};

// Pairs (exclusive holder, any other container) whose CPUs intersect; notes each one.
int CountOverlaps(const std::vector<NamedCpus>& containers, const char* source) {
  int overlaps = 0;
  for (size_t a = 0; a < containers.size(); ++a) {
    if (!containers[a].exclusive) continue;
    for (size_t b = 0; b < containers.size(); ++b) {
      if (a == b || !containers[a].cpus.Overlaps(containers[b].cpus)) continue;
      // Two exclusive holders sharing a CPU are one pair, not two.
      if (containers[b].exclusive && b < a) continue;
      ++overlaps;
      std::fprintf(stderr, "# LOAD overlap (%s): %s %s and %s %s\n", source,
                   containers[a].name.c_str(), containers[a].cpus.ToString().c_str(),
                   containers[b].name.c_str(), containers[b].cpus.ToString().c_str());
    }
  }
  return overlaps;
}

// Diagnosis for cgroup overlaps: the containers whose cgroup cpuset differs from qrm's
// allocation, whether that persists five more reconcile periods, and what qrm-host logged
// about them.
void NoteStaleCgroups(BenchNode& node, qrm::e2e::CriClient& shim, const LoadResult& load,
                      const std::map<std::string, std::string>& allocated_by_pod) {
  std::vector<const StartedContainer*> stale;
  for (const auto& c : load.started) {
    auto cgroup = shim.ContainerCgroupCpus(c.container_id);
    auto it = allocated_by_pod.find(c.pod_name);
    if (cgroup.ok() && it != allocated_by_pod.end() && *cgroup != it->second) {
      stale.push_back(&c);
      std::fprintf(stderr, "# LOAD stale: %s cgroup %s, qrm's allocation %s\n", c.pod_name.c_str(),
                   cgroup->c_str(), it->second.c_str());
    }
  }
  (void)node.WaitReconcileTicks(5);
  const std::string log = qrm::testing::ReadFile(node.File("qrm-host.log"));
  for (const StartedContainer* c : stale) {
    auto cgroup = shim.ContainerCgroupCpus(c->container_id);
    std::fprintf(stderr, "# LOAD stale: %s after 5 more reconcile periods: cgroup %s\n",
                 c->pod_name.c_str(), cgroup.ok() ? cgroup->c_str() : "?");
    // Log lines name a pod "ns/name(uid)" or "pod=<uid>"; the uid is "<name>-uid".
    const std::string uid = c->pod_name + "-uid";
    for (size_t line = 0; line < log.size();) {
      const size_t end = std::min(log.find('\n', line), log.size());
      const std::string text = log.substr(line, end - line);
      if (text.find("(" + uid + ")") != std::string::npos ||
          text.find("pod=" + uid + " ") != std::string::npos) {
        std::fprintf(stderr, "#   %s\n", text.c_str());
      }
      line = end + 1;
    }
  }
}

// Exclusive-CPU overlaps in qrm's allocations and in the started containers' cgroups.
// Returns -1 (after saying why) when they cannot be read.
int CheckOverlaps(BenchNode& node, qrm::e2e::CriClient& shim, const LoadResult& load) {
  auto allocations = node.Allocations();
  if (!allocations.ok()) {
    std::fprintf(stderr, "load_bench: %s\n", allocations.status().ToString().c_str());
    return -1;
  }
  std::vector<NamedCpus> allocated;
  std::map<std::string, std::string> allocated_by_pod;  // pod name -> cpuset (one container)
  int exclusive = 0;
  for (const auto& pod : allocations->pods()) {
    for (const auto& c : pod.containers()) {
      auto cpus = CpuSet::Parse(c.cpuset_cpus());
      if (!cpus.ok()) continue;  // no cpuset: nothing to overlap
      const bool dedicated = c.qos_level() == "dedicated_cores";
      if (dedicated) {
        ++exclusive;
        std::fprintf(stderr, "# LOAD: %s holds CPU(s) %s exclusively\n", pod.name().c_str(),
                     cpus->ToString().c_str());
      }
      allocated.push_back({pod.name() + "/" + c.name(), *cpus, dedicated});
      allocated_by_pod[pod.name()] = cpus->ToString();
    }
  }
  const int in_allocations = CountOverlaps(allocated, "allocations");

  // The cgroups follow qrm's pools within a reconcile period; give them two.
  if (qrm::Status s = node.WaitReconcileTicks(2); !s.ok()) {
    std::fprintf(stderr, "load_bench: %s\n", s.ToString().c_str());
    return -1;
  }
  std::vector<NamedCpus> cgroups;
  for (const auto& c : load.started) {
    auto text = shim.ContainerCgroupCpus(c.container_id);
    qrm::StatusOr<CpuSet> cpus = text.status();
    if (text.ok()) cpus = CpuSet::Parse(*text);
    if (!cpus.ok()) {
      std::fprintf(stderr, "load_bench: cpuset of %s: %s\n", c.pod_name.c_str(),
                   cpus.status().ToString().c_str());
      return -1;
    }
    cgroups.push_back({c.pod_name, *cpus, c.dedicated});
  }
  const int in_cgroups = CountOverlaps(cgroups, "cgroups");
  if (in_cgroups > 0) NoteStaleCgroups(node, shim, load, allocated_by_pod);
  std::fprintf(stderr,
               "# LOAD: %d exclusive holders; overlaps: %d in qrm's allocations (%zu containers), "
               "%d in the cgroups (%zu containers)\n",
               exclusive, in_allocations, allocated.size(), in_cgroups, cgroups.size());
  return in_allocations + in_cgroups;
}

void NoteRun(const char* what, const LoadResult& r, int pods) {
  std::fprintf(stderr, "# LOAD %s: %d pods in %.2f s, %zu started, %d refused, %d errors\n", what,
               pods, r.seconds, r.started.size(), r.refused, r.errors);
  for (const auto& e : r.first_errors) std::fprintf(stderr, "#   error: %s\n", e.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args({{"pods", 100}, {"threads", 16}, {"dedicated", 4}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "load_bench: %s\n", error.c_str());
    return 2;
  }
  if (!args.Selected("LOAD")) return 0;
  if (::geteuid() != 0) {
    std::fprintf(stderr, "load_bench: needs root (it runs a private containerd)\n");
    return 2;
  }
  qrm::ConfigureLogging("warn");
  auto node = BenchNode::Start();
  if (!node.ok()) {
    std::fprintf(stderr, "load_bench: %s\n", node.status().ToString().c_str());
    return 1;
  }
  qrm::e2e::CriClient shim = (*node)->Shim();
  qrm::e2e::CriClient direct = (*node)->Direct();
  const int pods = args.Int("pods");

  const LoadResult through = RunLoad(shim, "shim", args);
  NoteRun("through the shim", through, pods);
  const int overlaps = CheckOverlaps(**node, shim, through);
  int cleanup_errors = 0;
  RemovePods(shim, through, args, &cleanup_errors);
  // Removing through the shim releases every allocation; the direct run starts from the
  // same empty node.
  auto left = (*node)->Allocations();
  std::fprintf(stderr, "# LOAD: after removing the shim's pods qrm holds %d pods\n",
               left.ok() ? left->pods_size() : -1);

  const LoadResult plain = RunLoad(direct, "direct", args);
  NoteRun("directly on containerd", plain, pods);
  RemovePods(direct, plain, args, &cleanup_errors);
  if (cleanup_errors > 0)
    std::fprintf(stderr, "# LOAD: %d pods failed to remove\n", cleanup_errors);

  std::printf("LOAD_shim %.2f s\n", through.seconds);
  std::printf("LOAD_direct %.2f s ratio=%.3f\n", plain.seconds, through.seconds / plain.seconds);
  std::printf("LOAD_errors %d count\n", through.errors + plain.errors);
  std::printf("LOAD_refused %d count\n", through.refused + plain.refused);
  std::printf("LOAD_overlaps %d count\n", overlaps);
  std::fflush(stdout);

  for (const auto& l : (*node)->Stop()) std::fprintf(stderr, "cleanup: %s\n", l.c_str());
  const bool ok = through.errors + plain.errors == 0 && overlaps == 0 && cleanup_errors == 0 &&
                  left.ok() && left->pods_size() == 0;
  return ok ? 0 : 1;
}
