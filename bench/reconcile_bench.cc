// P6: one reconcile tick with 1,000 containers.
//
// An in-process qrm::host::Host and one qrm-bench-plugin process (need_reconcile,
// CpusetCpus "0-3" for everyone), 1,000 pods x 1 container admitted (in parallel threads),
// a runtime view that lists all of them (so garbage collection runs and keeps them) and a
// RuntimeApplier that counts calls. Then Reconciler::RunOnce() is timed:
//
//   P6_unchanged_cpu     CPU time of this whole process (CLOCK_PROCESS_CPUTIME_ID, every
//                        thread: the tick fans out to the worker pool and gRPC threads) around
//                        a tick where nothing changed, median over --ticks ticks, ms. The
//                        plugin's own CPU is not included (it is another process).
//   P6_unchanged_wall    wall time of the same ticks, median, ms.
//   P6_changed_calls     the plugin now reports "4-7" for exactly 100 containers (chosen by
//                        pod uid through its --override-file): RuntimeApplier calls made by the
//                        next tick (must be 100).
//   P6_changed_wall      wall time of that tick (100 pods' host checkpoint files written
//                        durably, up to StateStore::kMaxParallelWrites at a time), ms.
//   P6_after_calls       calls made by the tick after that (must be 0).
//   P6_setup_admit_1000  how long admitting the 1,000 containers took, s (informative).
//
// The host checkpoint is on a real disk: this executable's directory unless --dir.
//
// Usage: reconcile_bench [--only ID]... [--containers N] [--changed N] [--ticks N]
//                        [--threads N] [--dir DIR] [--keep]
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/host_bench_util.h"

namespace qrm::bench {
namespace {

constexpr const char* kResource = "bench.qrm.io/cpu";

struct Settings {
  int containers = 1000;
  int changed = 100;
  int ticks = 20;
  int threads = 8;
  std::string dir;
  bool keep = false;
};

void Die(const std::string& what) {
  std::fprintf(stderr, "reconcile_bench: %s\n", what.c_str());
  std::exit(1);
}

std::string PodUid(int i) {
  return fmt::format("p6-{:06d}", i);
}

// Replaces `path` atomically, so the plugin never reads half of it.
void WriteFileAtomically(const std::string& path, const std::string& content) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << content;
    if (!out) Die("cannot write " + temp);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) Die("cannot rename " + temp);
}

struct Tick {
  reconcile::ReconcileStats stats;
  double wall_ms = 0;
  double cpu_ms = 0;
  int calls = 0;
};

Tick RunTick(reconcile::Reconciler& reconciler, CountingApplier& applier) {
  applier.reset();
  const double cpu0 = ProcessCpuMs();
  const Clock::time_point t0 = Clock::now();
  auto stats = reconciler.RunOnce();
  const double wall = Ms(Clock::now() - t0);
  const double cpu = ProcessCpuMs() - cpu0;
  if (!stats.ok()) Die("tick failed: " + stats.status().ToString());
  if (stats->plugins_polled != 1 || stats->plugin_errors != 0) {
    Die(fmt::format("tick polled {} plugin(s), {} error(s)", stats->plugins_polled,
                    stats->plugin_errors));
  }
  return {*stats, wall, cpu, applier.calls()};
}

void Run(const Settings& s) {
  ScratchDir dir(s.dir, "qrm-p6-", s.keep);
  Note("P6: state in {} ({})", dir.path(), FilesystemOf(dir.path()));
  HostRig rig(dir.path());
  CountingApplier applier;
  FixedRuntimeView view;
  if (Status st = rig.StartHost(rig.Options(), applier, &view); !st.ok()) {
    Die("host: " + st.ToString());
  }
  const std::string override_file = dir.File("override.txt");
  if (!rig.StartPlugin(kResource, {QRM_BENCH_PLUGIN, "--resource", kResource, "--result", "0-3",
                                   "--override-file", override_file})) {
    Die(fmt::format("plugin did not register (see {}/plugins.log)", dir.path()));
  }

  // ---- 1,000 admissions, in parallel ----
  admission::Admission& admission = rig.host().admission();
  for (int i = 0; i < s.containers; ++i) view.Add(PodUid(i));
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  std::string first_error;
  std::mutex error_mu;
  const Clock::time_point setup0 = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < s.threads; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < s.containers; i = next++) {
        auto r = admission.Admit(BenchRequest(PodUid(i), "main", {{kResource, 2}}));
        if (!r.ok()) {
          ++failures;
          std::lock_guard lock(error_mu);
          if (first_error.empty()) first_error = r.status().ToString();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double setup_s = Ms(Clock::now() - setup0) / 1e3;
  if (failures > 0) Die(fmt::format("{} admission(s) failed: {}", failures.load(), first_error));

  reconcile::Reconciler& reconciler = rig.host().reconciler();
  // Warm-up (first GetResourcesAllocation of this size, allocator growth).
  for (int i = 0; i < 2; ++i) {
    const Tick t = RunTick(reconciler, applier);
    if (t.calls != 0 || t.stats.resources_changed != 0) {
      Die(fmt::format("an unchanged tick made {} call(s), {} change(s)", t.calls,
                      t.stats.resources_changed));
    }
  }

  // ---- unchanged ticks ----
  std::vector<double> cpu_ms, wall_ms;
  const double plugin_cpu0 = OtherProcessCpuMs(rig.plugin(0).pid());
  for (int i = 0; i < s.ticks; ++i) {
    const Tick t = RunTick(reconciler, applier);
    if (t.calls != 0) Die(fmt::format("an unchanged tick made {} call(s)", t.calls));
    cpu_ms.push_back(t.cpu_ms);
    wall_ms.push_back(t.wall_ms);
  }
  const double plugin_cpu = (OtherProcessCpuMs(rig.plugin(0).pid()) - plugin_cpu0) / s.ticks;
  Note(
      "P6: unchanged tick: host CPU min {:.2f} / median {:.2f} / max {:.2f} ms; wall min {:.2f}"
      " / median {:.2f} / max {:.2f} ms; plugin process CPU ~{:.1f} ms per tick (not counted)",
      Percentile(cpu_ms, 0), Percentile(cpu_ms, 0.5), Percentile(cpu_ms, 1), Percentile(wall_ms, 0),
      Percentile(wall_ms, 0.5), Percentile(wall_ms, 1), plugin_cpu);

  // ---- exactly `changed` containers change ----
  std::string overrides;
  const int stride = s.containers / std::max(1, s.changed);
  for (int n = 0; n < s.changed; ++n) overrides += PodUid(n * stride) + " 4-7\n";
  WriteFileAtomically(override_file, overrides);
  const Tick changed = RunTick(reconciler, applier);
  Note("P6: changed tick: {} resource change(s), {} container(s) applied, host CPU {:.2f} ms",
       changed.stats.resources_changed, changed.stats.containers_applied, changed.cpu_ms);
  const Tick after = RunTick(reconciler, applier);
  Note("P6: following tick: wall {:.2f} ms, host CPU {:.2f} ms", after.wall_ms, after.cpu_ms);

  Figure("P6_unchanged_cpu", Percentile(cpu_ms, 0.5), "ms");
  Figure("P6_unchanged_wall", Percentile(wall_ms, 0.5), "ms");
  Figure("P6_changed_calls", changed.calls, "calls");
  Figure("P6_changed_wall", changed.wall_ms, "ms");
  Figure("P6_after_calls", after.calls, "calls");
  Figure("P6_setup_admit_1000", setup_s, "s");
}

}  // namespace
}  // namespace qrm::bench

int main(int argc, char** argv) {
  using namespace qrm::bench;
  Settings s;
  s.dir = ExeDir();
  const CommonFlags flags =
      ParseFlags(argc, argv,
                 {{"--containers", [&](const char* v) { s.containers = std::atoi(v); }},
                  {"--changed", [&](const char* v) { s.changed = std::atoi(v); }},
                  {"--ticks", [&](const char* v) { s.ticks = std::atoi(v); }},
                  {"--threads", [&](const char* v) { s.threads = std::atoi(v); }},
                  {"--dir", [&](const char* v) { s.dir = v; }}});
  s.keep = flags.keep;
  if (s.containers < 1 || s.changed < 0 || s.changed > s.containers || s.ticks < 1 ||
      s.threads < 1) {
    Die("need --containers >= 1, 0 <= --changed <= --containers, --ticks >= 1, --threads >= 1");
  }
  qrm::ConfigureLogging("warn");
  if (Wanted(flags.only, {"P6_unchanged_cpu", "P6_unchanged_wall", "P6_changed_calls",
                          "P6_changed_wall", "P6_after_calls", "P6_setup_admit_1000"})) {
    Run(s);
  }
  return 0;
}
