// scale_bench: qrm-host with 1,000 containers admitted (issue 7, "Scale").
//
// A whole node (bench_node.h: private containerd, qrm-host, the three real plugins). Through
// the shim, --pods shared_cores pod sandboxes are started and --containers containers
// created in them (not started: admission happens at CreateContainer, and 1,000 running
// containers would measure runc, not qrm). Then, after one full reconcile tick:
//
//   P7 <VmRSS> MiB          qrm-host's resident memory (target <= 30 MiB)
//   P7_hwm <VmHWM> MiB      its peak resident memory so far
//   P8 <ms> ms              SIGKILL + start again, exec to GET /readyz 200 (target <= 1 s);
//                           median of --restarts
//   P8_socket <ms> ms       the same start, exec to the CRI socket answering Version
//
// Needs root. Flags: --pods N (50), --containers N (1000), --threads N (8, client threads
// creating), --restarts N (5), --only ID (repeatable).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "bench/scale/bench_args.h"
#include "bench/scale/bench_node.h"
#include "bench/scale/parallel_for.h"
#include "bench/scale/probes.h"
#include "common/log.h"

namespace {

using namespace qrm::bench;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Failures of parallel steps: how many, and the first message for the report.
class Failures {
 public:
  void Add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (count_++ == 0) first_ = what;
  }
  int count() const { return count_; }
  const std::string& first() const { return first_; }

 private:
  std::mutex mu_;
  int count_ = 0;
  std::string first_;
};

// A shared_cores container as the kubelet sends it for 100m CPU and an 8 MiB limit.
qrm::e2e::ContainerSpec SmallContainer(int index) {
  qrm::e2e::ContainerSpec spec;
  // Appended rather than "c" + to_string(): GCC 12 -O3 warns (-Wrestrict) on the latter.
  spec.name = "c";
  spec.name += std::to_string(index);
  spec.cpu_shares = 102;  // floor(100 * 1024 / 1000)
  spec.memory_limit_in_bytes = 8LL << 20;
  return spec;
}

// Starts the sandboxes and creates the containers through the shim; returns false (after
// saying why) unless every one was admitted.
bool AdmitContainers(BenchNode& node, const BenchArgs& args) {
  const int pods = std::max(1, args.Int("pods")), containers = args.Int("containers");
  qrm::e2e::CriClient shim = node.Shim();
  std::vector<qrm::e2e::Pod> sandboxes(static_cast<size_t>(pods));
  Failures failures;
  auto start = Clock::now();
  ParallelFor(pods, args.Int("threads"), [&](int p) {
    const std::string name = "scale-" + std::to_string(p);
    auto pod = shim.RunHostNetworkPod(name, name + "-uid", "bench",
                                      {{"katalyst.kubewharf.io/qos_level", "shared_cores"}});
    if (pod.ok()) {
      sandboxes[static_cast<size_t>(p)] = *pod;
    } else {
      failures.Add(name + ": " + pod.status().ToString());
    }
  });
  std::fprintf(stderr, "# scale: %d sandboxes started in %.1f s\n", pods, SecondsSince(start));
  if (failures.count() > 0) {
    std::fprintf(stderr, "scale_bench: %d sandboxes failed, first: %s\n", failures.count(),
                 failures.first().c_str());
    return false;
  }
  start = Clock::now();
  ParallelFor(containers, args.Int("threads"), [&](int i) {
    auto id =
        shim.CreateContainer(sandboxes[static_cast<size_t>(i % pods)], SmallContainer(i / pods));
    if (!id.ok()) failures.Add("container " + std::to_string(i) + ": " + id.status().ToString());
  });
  const double seconds = SecondsSince(start);
  std::fprintf(stderr,
               "# scale: %d containers created through the shim in %.1f s (%.1f ms each, "
               "%d client threads)\n",
               containers, seconds, 1000 * seconds / std::max(1, containers), args.Int("threads"));
  if (failures.count() > 0) {
    std::fprintf(stderr, "scale_bench: %d creates failed, first: %s\n", failures.count(),
                 failures.first().c_str());
    return false;
  }
  auto allocations = node.Allocations();
  if (!allocations.ok()) {
    std::fprintf(stderr, "scale_bench: %s\n", allocations.status().ToString().c_str());
    return false;
  }
  int admitted = 0;
  for (const auto& p : allocations->pods()) admitted += p.containers_size();
  std::fprintf(stderr, "# scale: qrm-host holds %d pods / %d containers\n",
               allocations->pods_size(), admitted);
  if (admitted != containers) {
    std::fprintf(stderr, "scale_bench: %d containers admitted, %d expected\n", admitted,
                 containers);
    return false;
  }
  return true;
}

// How many files qrm-host keeps in its state directory and their total size, for the notes.
void NoteCheckpointSize(const BenchNode& node) {
  std::error_code ec;
  int files = 0;
  uintmax_t bytes = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(node.File("state-host"), ec)) {
    if (!entry.is_regular_file()) continue;
    ++files;
    bytes += entry.file_size(ec);
  }
  std::fprintf(stderr, "# scale: qrm-host's checkpoint: %d files, %.1f KiB\n", files,
               static_cast<double>(bytes) / 1024.0);
}

void PrintMemory(const BenchNode& node) {
  const auto rss = ProcNumber(node.host_pid(), "VmRSS");
  const auto hwm = ProcNumber(node.host_pid(), "VmHWM");
  if (!rss || !hwm) {
    std::fprintf(stderr, "scale_bench: cannot read /proc/%d/status\n", node.host_pid());
    return;
  }
  // Where the resident memory is: heap, arenas and stacks (anon) vs the mapped binaries and
  // shared libraries (file; shared with the plugins, hence also the proportional Pss).
  auto mib = [&](const char* field, const char* file) {
    return static_cast<double>(ProcNumber(node.host_pid(), field, file).value_or(0)) / 1024.0;
  };
  std::error_code ec;
  const long threads = ProcNumber(node.host_pid(), "Threads").value_or(0);
  std::fprintf(stderr, "# P7: RssAnon %.1f MiB, RssFile %.1f MiB, Pss %.1f MiB, %ld threads\n",
               mib("RssAnon", "status"), mib("RssFile", "status"), mib("Pss", "smaps_rollup"),
               threads);
  // QRM_BENCH_SMAPS=FILE keeps the per-mapping detail for a closer look.
  if (const char* keep = std::getenv("QRM_BENCH_SMAPS")) {
    // Read, not copy_file: /proc files report a size of 0.
    std::ifstream smaps("/proc/" + std::to_string(node.host_pid()) + "/smaps");
    std::ofstream(keep) << smaps.rdbuf();
  }
  // Threads by name: each one's stack and per-thread caches count in RssAnon.
  std::map<std::string, int> by_name;
  for (const auto& task : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(node.host_pid()) + "/task", ec)) {
    std::string name;
    std::getline(std::ifstream(task.path() / "comm"), name);
    ++by_name[name];
  }
  std::string names;
  for (const auto& [name, count] : by_name) names += fmt::format(" {}x{}", name, count);
  std::fprintf(stderr, "# P7: threads:%s\n", names.c_str());
  // Live heap vs free memory malloc keeps (qrm_heap_bytes): data vs fragmentation.
  const HttpResponse metrics = HttpGet(node.metrics_port(), "/metrics", std::chrono::seconds(5));
  std::string heap;
  for (const char* state : {"in_use", "free"}) {
    const std::string key = fmt::format("qrm_heap_bytes{{state=\"{}\"}} ", state);
    const size_t at = metrics.body.find(key);
    if (at == std::string::npos) continue;
    heap += fmt::format(" {} {:.1f} MiB", state,
                        std::strtod(metrics.body.c_str() + at + key.size(), nullptr) / 1048576.0);
  }
  std::fprintf(stderr, "# P7: heap:%s\n", heap.c_str());
  std::printf("P7 %.1f MiB\n", static_cast<double>(*rss) / 1024.0);
  std::printf("P7_hwm %.1f MiB\n", static_cast<double>(*hwm) / 1024.0);
  std::fflush(stdout);
}

// P8: --restarts SIGKILL + start cycles; medians of both start times.
bool MeasureRestarts(BenchNode& node, const BenchArgs& args) {
  std::vector<double> socket_ms, ready_ms;
  for (int r = 0; r < std::max(1, args.Int("restarts")); ++r) {
    auto times = node.KillAndRestartHost();
    if (!times.ok()) {
      std::fprintf(stderr, "scale_bench: restart %d: %s\n", r, times.status().ToString().c_str());
      return false;
    }
    socket_ms.push_back(times->socket_ms);
    ready_ms.push_back(times->ready_ms);
    std::fprintf(stderr, "# P8 restart %d: CRI Version after %.1f ms, /readyz 200 after %.1f ms\n",
                 r, times->socket_ms, times->ready_ms);
  }
  // The restarted host must still hold every container (it loaded its checkpoint).
  auto allocations = node.Allocations();
  int held = 0;
  if (allocations.ok()) {
    for (const auto& p : allocations->pods()) held += p.containers_size();
  }
  const auto rss = ProcNumber(node.host_pid(), "VmRSS");
  std::fprintf(stderr, "# P8: after the restarts qrm-host holds %d containers, VmRSS %.1f MiB\n",
               held, rss ? static_cast<double>(*rss) / 1024.0 : -1.0);
  std::printf("P8 %.1f ms\n", Median(ready_ms));
  std::printf("P8_socket %.1f ms\n", Median(socket_ms));
  std::fflush(stdout);
  return held == args.Int("containers");
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args({{"pods", 50}, {"containers", 1000}, {"threads", 8}, {"restarts", 5}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "scale_bench: %s\n", error.c_str());
    return 2;
  }
  const bool p7 = args.Selected("P7"), p8 = args.Selected("P8");
  if (!p7 && !p8) return 0;
  if (::geteuid() != 0) {
    std::fprintf(stderr, "scale_bench: needs root (it runs a private containerd)\n");
    return 2;
  }
  qrm::ConfigureLogging("warn");
  auto node = BenchNode::Start();
  if (!node.ok()) {
    std::fprintf(stderr, "scale_bench: %s\n", node.status().ToString().c_str());
    return 1;
  }
  bool ok = AdmitContainers(**node, args);
  if (ok) {
    // One full reconcile tick after the admissions (the one running now may have started
    // before the last of them).
    qrm::Status s = (*node)->WaitReconcileTicks(2);
    if (!s.ok()) std::fprintf(stderr, "scale_bench: %s\n", s.ToString().c_str());
    ok = s.ok();
  }
  if (ok) {
    NoteCheckpointSize(**node);
    if (p7) PrintMemory(**node);
    if (p8) ok = MeasureRestarts(**node, args);
  }
  if (!ok) std::fprintf(stderr, "%s", (*node)->LogTails().c_str());
  const auto start = Clock::now();
  for (const auto& l : (*node)->Stop()) std::fprintf(stderr, "cleanup: %s\n", l.c_str());
  std::fprintf(stderr, "# scale: clean-up took %.1f s\n", SecondsSince(start));
  return ok ? 0 : 1;
}
