// soak_bench: a long pod churn through the CRI shim (qrm-host with the three real plugins on a
// real containerd) must leave nothing behind in qrm-host (issue 12, item 8).
//
// One lifecycle is what the kubelet does for a short-lived pod: RunPodSandbox, CreateContainer,
// StartContainer, StopContainer, RemoveContainer, StopPodSandbox, RemovePodSandbox, each pod
// with a fresh name and uid, from --threads client threads. After --warmup lifecycles (caches,
// thread pools and malloc's arenas reach their working size), RssAnon is sampled every
// --sample-every lifecycles over --lifecycles more, each sample after two reconcile periods
// (the host trims its heap once per period, so a sample sees live memory, not a burst's free
// chunks). The growth is the least-squares slope of those samples.
//
//   SOAK <KiB> KiB/1000      qrm-host RssAnon growth per 1,000 lifecycles after the warm-up
//   SOAK_heap <KiB> KiB/1000 growth of malloc's live bytes (qrm_heap_bytes{state="in_use"}):
//                            a leak shows in both, memory parked in malloc only in SOAK
//   SOAK_rss_start <KiB> KiB, SOAK_rss_end <KiB> KiB
//   SOAK_fds_before <n> count, SOAK_fds_after <n> count          open descriptors
//   SOAK_threads_before <n> count, SOAK_threads_after <n> count
//   SOAK_errors <n> count    failed CRI calls
//
// Needs root. Flags: --warmup N (1000), --lifecycles N (5000), --sample-every N (500),
// --threads N (8), --only ID.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <dirent.h>
#include <unistd.h>

#include "bench/scale/bench_args.h"
#include "bench/scale/bench_node.h"
#include "bench/scale/parallel_for.h"
#include "bench/scale/probes.h"
#include "common/log.h"

namespace {

using namespace qrm::bench;
using Clock = std::chrono::steady_clock;

struct Churn {
  std::atomic<int> errors{0};
  std::atomic<int> next_pod{0};
  std::string first_error;
  std::mutex mu;

  void Fail(const std::string& what) {
    if (errors.fetch_add(1) == 0) {
      std::lock_guard lock(mu);
      first_error = what;
    }
  }
};

// One pod's whole life, as the kubelet drives it.
void Lifecycle(qrm::e2e::CriClient& cri, Churn& churn) {
  const std::string name = "soak-" + std::to_string(churn.next_pod++);
  auto pod = cri.RunHostNetworkPod(name, name + "-uid", "bench-soak",
                                   {{"katalyst.kubewharf.io/qos_level", "shared_cores"}});
  if (!pod.ok()) return churn.Fail(name + ": " + pod.status().ToString());
  qrm::e2e::ContainerSpec spec;
  spec.name = "main";
  spec.cpu_shares = 102;
  spec.memory_limit_in_bytes = 32LL << 20;
  auto id = cri.CreateAndStartContainer(*pod, spec);
  if (!id.ok()) churn.Fail(name + ": " + id.status().ToString());
  if (id.ok()) {
    if (qrm::Status s = cri.StopAndRemoveContainer(*id); !s.ok()) {
      churn.Fail(name + ": " + s.ToString());
    }
  }
  if (qrm::Status s = cri.StopAndRemovePod(pod->id); !s.ok())
    churn.Fail(name + ": " + s.ToString());
}

long CountFds(pid_t pid) {
  DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return -1;
  long n = 0;
  while (dirent* e = ::readdir(dir)) n += e->d_name[0] != '.' ? 1 : 0;
  ::closedir(dir);
  return n;
}

struct Sample {
  double lifecycles = 0;
  double rss_kib = 0;
  double heap_kib = 0;
};

// Quiet first (two reconcile periods: pending releases done, the heap trimmed), then read.
Sample Measure(BenchNode& node, int lifecycles) {
  (void)node.WaitReconcileTicks(2);
  const HttpResponse metrics = HttpGet(node.metrics_port(), "/metrics");
  const double heap = MetricValue(metrics.body, "qrm_heap_bytes{state=\"in_use\"}").value_or(-1024);
  return {static_cast<double>(lifecycles),
          static_cast<double>(ProcNumber(node.host_pid(), "RssAnon").value_or(-1)), heap / 1024};
}

// Least-squares slope of `field` over lifecycles, in KiB per 1,000 lifecycles.
double SlopePerThousand(const std::vector<Sample>& samples, double Sample::*field) {
  double mx = 0, my = 0;
  for (const Sample& s : samples) {
    mx += s.lifecycles;
    my += s.*field;
  }
  mx /= static_cast<double>(samples.size());
  my /= static_cast<double>(samples.size());
  double sxy = 0, sxx = 0;
  for (const Sample& s : samples) {
    sxy += (s.lifecycles - mx) * (s.*field - my);
    sxx += (s.lifecycles - mx) * (s.lifecycles - mx);
  }
  return sxx > 0 ? 1000 * sxy / sxx : 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args({{"warmup", 1000}, {"lifecycles", 5000}, {"sample-every", 500}, {"threads", 8}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "soak_bench: %s\n", error.c_str());
    return 2;
  }
  if (!args.Selected("SOAK")) return 0;
  if (::geteuid() != 0) {
    std::fprintf(stderr, "soak_bench: needs root (it runs a private containerd)\n");
    return 2;
  }
  qrm::ConfigureLogging("warn");
  auto node = BenchNode::Start();
  if (!node.ok()) {
    std::fprintf(stderr, "soak_bench: %s\n", node.status().ToString().c_str());
    return 1;
  }
  qrm::e2e::CriClient shim = (*node)->Shim();
  Churn churn;
  const auto start = Clock::now();
  auto run = [&](int n) {
    ParallelFor(n, args.Int("threads"), [&](int) { Lifecycle(shim, churn); });
  };

  run(args.Int("warmup"));
  const pid_t pid = (*node)->host_pid();
  std::vector<Sample> samples = {Measure(**node, 0)};
  const long fds_before = CountFds(pid);
  const long threads_before = ProcNumber(pid, "Threads").value_or(-1);
  const int step = std::max(1, args.Int("sample-every"));
  for (int done = 0; done < args.Int("lifecycles");) {
    const int n = std::min(step, args.Int("lifecycles") - done);
    run(n);
    done += n;
    samples.push_back(Measure(**node, done));
    std::fprintf(
        stderr, "# SOAK: %d lifecycles after the warm-up: RssAnon %.0f KiB, heap in use %.0f KiB\n",
        done, samples.back().rss_kib, samples.back().heap_kib);
  }
  const long fds_after = CountFds(pid);
  const long threads_after = ProcNumber(pid, "Threads").value_or(-1);
  auto left = (*node)->Allocations();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::fprintf(stderr, "# SOAK: %d + %d lifecycles in %.0f s; qrm holds %d pods afterwards\n",
               args.Int("warmup"), args.Int("lifecycles"), seconds,
               left.ok() ? left->pods_size() : -1);
  if (churn.errors > 0) std::fprintf(stderr, "#   first error: %s\n", churn.first_error.c_str());

  std::printf("SOAK %.1f KiB/1000\n", SlopePerThousand(samples, &Sample::rss_kib));
  std::printf("SOAK_heap %.1f KiB/1000\n", SlopePerThousand(samples, &Sample::heap_kib));
  std::printf("SOAK_rss_start %.0f KiB\n", samples.front().rss_kib);
  std::printf("SOAK_rss_end %.0f KiB\n", samples.back().rss_kib);
  std::printf("SOAK_fds_before %ld count\nSOAK_fds_after %ld count\n", fds_before, fds_after);
  std::printf("SOAK_threads_before %ld count\nSOAK_threads_after %ld count\n", threads_before,
              threads_after);
  std::printf("SOAK_errors %d count\n", churn.errors.load());
  std::fflush(stdout);
  for (const auto& l : (*node)->Stop()) std::fprintf(stderr, "cleanup: %s\n", l.c_str());
  return churn.errors == 0 && left.ok() && left->pods_size() == 0 ? 0 : 1;
}
