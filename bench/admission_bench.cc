// P5: one admission end to end, against the floor of one durable write.
//
// An in-process qrm::host::Host (as tests/integration/host/host_fixture.h starts it) and 3
// qrm-test-plugin processes, each serving its own resource (test.qrm.io/r0..r2) and
// recording every Allocate (--state: the SDK's pod ledger, one journal append per call, not
// synced, as the bundled plugins' default --state-sync host-replays). Every
// admission is a new pod (a unique uid) requesting all three resources, so each one really
// runs: 3 GetTopologyHints in parallel, the merge, 3 Allocate in parallel (3 plugin
// journal appends) and the host checkpoint's durable write (one record in its journal; the
// pod files wait for the compaction). Pods are not removed, so the host checkpoint grows to
// warm-up + N pods, as on a node that fills up.
//
// In the same run and the same directory, interleaved with the admissions, the floor: one
// durable 4 KiB write (checkpoint::Write: temp file, fsync, rename, fsync directory).
//
//   P5_floor_p50, P5_floor_p99   the durable 4 KiB write, ms
//   P5_p50, P5_p99               one admission, ms; ratio = admission / floor (same percentile)
//   P5_tmpfs_p50, P5_tmpfs_p99   the same admissions with every state file on tmpfs, ms
//   P5_tmpfs_rpc_floor           two rounds of bare calls (GetResourcePluginOptions, answered
//                                from memory) to the three plugins at once, the protocol's
//                                share of a tmpfs admission, ms
//
// Notes on stderr: the directories and their filesystems, the file sizes, and a breakdown
// (the hints and Allocate RPCs, alone and fanned out to the 3 plugins as Admit does, and the
// encode and durable write of one pod's checkpoint file, what a compaction writes) to show
// where an admission's time goes.
//
// Usage: admission_bench [--only ID]... [--iterations N] [--warmup N] [--dir DIR]
//                        [--tmpfs-dir DIR] [--keep]
//   --dir DIR        where the disk variant's state lives (default: this executable's
//                    directory, i.e. the build tree, on a real disk)
//   --tmpfs-dir DIR  the tmpfs variant's (default /dev/shm)
//   --keep           leave the scratch directories (state files, plugins.log) behind
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "bench/host_bench_util.h"
#include "checkpoint/checkpoint_file.h"
#include "qrm/registry/pending_call.h"
#include "qrm/state/state_codec.h"

namespace qrm::bench {
namespace {

namespace pb = ::resourceplugin::v1alpha1;

constexpr int kPlugins = 3;
constexpr long kTmpfsMagic = 0x01021994;

struct Settings {
  int iterations = 300;
  int warmup = 30;
  std::string dir;
  std::string tmpfs_dir = "/dev/shm";
  bool keep = false;
};

struct Samples {
  std::vector<double> admit_ms, floor_ms;
  double rpc_floor_ms = 0;  // two bare rounds to the three plugins (BareRoundMs), p50
};

std::string Resource(int k) {
  return fmt::format("test.qrm.io/r{}", k);
}

long FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

// About 4 KiB on disk once wrapped in the checkpoint envelope.
rapidjson::Document FloorData() {
  rapidjson::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  for (int i = 0; i < 32; ++i) {
    const std::string key = fmt::format("k{:02d}", i);
    const std::string value(116, static_cast<char>('a' + i % 26));
    doc.AddMember(rapidjson::Value(key.c_str(), a), rapidjson::Value(value.c_str(), a), a);
  }
  return doc;
}

void Die(const std::string& what) {
  std::fprintf(stderr, "admission_bench: %s\n", what.c_str());
  std::exit(1);
}

// The protocol's floor for one round of Admit: GetResourcePluginOptions, which the SDK answers
// from memory without calling the plugin's code, to one plugin and to all three at once on one
// completion queue, over channels of their own to the same plugin processes. Returns the p50s
// (one plugin, three) in ms.
std::pair<double, double> BareRoundMs(
    const std::vector<std::shared_ptr<registry::PluginEndpoint>>& endpoints) {
  using OptionsCall = registry::PendingCall<pb::ResourcePluginOptions>;
  std::vector<std::unique_ptr<pb::ResourcePlugin::Stub>> stubs;
  for (const auto& e : endpoints) {
    stubs.push_back(pb::ResourcePlugin::NewStub(
        grpc::CreateChannel("unix://" + e->socket_path(), grpc::InsecureChannelCredentials())));
  }
  auto round = [&](size_t n) {
    const Clock::time_point t0 = Clock::now();
    const auto ok = registry::FanOut<OptionsCall>(
        n,
        [&](size_t k, grpc::CompletionQueue* cq) {
          auto call = std::make_unique<OptionsCall>();
          call->reader = stubs[k]->AsyncGetResourcePluginOptions(&call->context, pb::Empty(), cq);
          call->reader->Finish(&call->response, &call->status, call.get());
          return call;
        },
        [](size_t, OptionsCall& call) { return call.status.ok(); });
    for (bool answered : ok) {
      if (!answered) Die("bare round: GetResourcePluginOptions failed");
    }
    return Ms(Clock::now() - t0);
  };
  std::vector<double> one_ms, all_ms;
  for (int i = 0; i < 5; ++i) round(stubs.size());  // connect
  for (int i = 0; i < 100; ++i) {
    one_ms.push_back(round(1));
    all_ms.push_back(round(stubs.size()));
  }
  return {Percentile(one_ms, 0.5), Percentile(all_ms, 0.5)};
}

// Host + 3 plugins in a fresh directory under `base`: times the admissions and, interleaved
// with them in the same directory, the durable 4 KiB write.
Samples Run(const Settings& s, const std::string& base, const std::string& tag) {
  ScratchDir dir(base, "qrm-p5-", s.keep);
  Note("P5{}: state in {} ({})", tag, dir.path(), FilesystemOf(dir.path()));
  HostRig rig(dir.path());
  CountingApplier applier;
  if (Status st = rig.StartHost(rig.Options(), applier, nullptr); !st.ok()) {
    Die("host: " + st.ToString());
  }
  for (int k = 0; k < kPlugins; ++k) {
    const std::string state = fmt::format("{}/r{}.json", rig.StateDir(), k);
    if (!rig.StartPlugin(Resource(k),
                         {QRM_TEST_PLUGIN, "--resource", Resource(k), "--state", state})) {
      Die(fmt::format("plugin {} did not register (see {}/plugins.log)", Resource(k), dir.path()));
    }
  }
  admission::Admission& admission = rig.host().admission();
  std::map<std::string, double> resources;
  for (int k = 0; k < kPlugins; ++k) resources[Resource(k)] = 1;

  const std::string floor_path = rig.StateDir() + "/floor.json";
  const rapidjson::Document floor_data = FloorData();
  Samples out;
  for (int i = 0; i < s.warmup + s.iterations; ++i) {
    const admission::ContainerRequest req =
        BenchRequest(fmt::format("p5-{:06d}", i), "main", resources);
    const Clock::time_point t0 = Clock::now();
    auto result = admission.Admit(req);
    const double admit = Ms(Clock::now() - t0);
    if (!result.ok()) Die("admission failed: " + result.status().ToString());
    if (result->allocation.resources.size() != kPlugins) Die("admission missed a resource");
    if (i >= s.warmup) out.admit_ms.push_back(admit);
    const Clock::time_point f0 = Clock::now();
    if (Status st = checkpoint::Write(floor_path, 1, floor_data); !st.ok()) {
      Die("floor write: " + st.ToString());
    }
    if (i >= s.warmup) out.floor_ms.push_back(Ms(Clock::now() - f0));
  }

  // ---- where the time goes (notes only) ----
  const auto& a = out.admit_ms;
  const auto n = static_cast<std::ptrdiff_t>(a.size() / 3);
  if (n > 0) {
    Note(
        "P5{}: admission p50 over the first third {:.3f} ms, the last third {:.3f} ms (host "
        "checkpoint growing from {} to {} pods)",
        tag, Percentile(std::vector<double>(a.begin(), a.begin() + n), 0.5),
        Percentile(std::vector<double>(a.end() - n, a.end()), 0.5), s.warmup,
        s.warmup + s.iterations);
  }
  const std::string last_uid = fmt::format("p5-{:06d}", s.warmup + s.iterations - 1);
  // An admission appends one record to the host's journal; pod files are written by the
  // compaction only, so the last pod has none yet.
  Note("P5{}: files: host journal {} B, plugin r0 state {} B, floor {} B", tag,
       FileSize(rig.StateDir() + "/pods.journal"), FileSize(rig.StateDir() + "/r0.json"),
       FileSize(floor_path));

  // The RPC phases as Admit runs them: one plugin, then all three at once on one completion
  // queue (the Allocates persist in the plugins; RemovePod undoes them, untimed).
  std::vector<std::shared_ptr<registry::PluginEndpoint>> endpoints;
  for (int k = 0; k < kPlugins; ++k) endpoints.push_back(rig.host().registry().Find(Resource(k)));
  std::vector<double> hints_ms, allocate_ms, hints_fan_ms, allocate_fan_ms;
  std::vector<double> encode_ms, host_write_ms, floor_ms;
  const auto timeout = std::chrono::seconds(10);
  for (int i = 0; i < 50; ++i) {
    pb::ResourceRequest req = admission::ToResourceRequest(
        BenchRequest(fmt::format("p5-diag-{:04d}", i), "main", resources));
    req.mutable_hint()->add_nodes(0);
    req.mutable_hint()->set_preferred(true);
    auto per_plugin = [&](size_t k) {
      pb::ResourceRequest r = req;
      r.set_resource_name(Resource(static_cast<int>(k)));
      return r;
    };
    Clock::time_point t0 = Clock::now();
    auto hints = endpoints[0]->GetTopologyHints(per_plugin(0), timeout);
    hints_ms.push_back(Ms(Clock::now() - t0));
    if (!hints.ok()) Die("diag hints: " + hints.status().ToString());
    t0 = Clock::now();
    auto alloc = endpoints[0]->Allocate(per_plugin(0), timeout);
    allocate_ms.push_back(Ms(Clock::now() - t0));
    if (!alloc.ok()) Die("diag allocate: " + alloc.status().ToString());
    t0 = Clock::now();
    const auto hints_ok = registry::FanOut<registry::PluginEndpoint::HintsCall>(
        kPlugins,
        [&](size_t k, grpc::CompletionQueue* cq) {
          return endpoints[k]->StartGetTopologyHints(per_plugin(k), timeout, cq);
        },
        [&](size_t k, registry::PluginEndpoint::HintsCall& call) {
          return endpoints[k]->FinishGetTopologyHints(call).ok();
        });
    hints_fan_ms.push_back(Ms(Clock::now() - t0));
    t0 = Clock::now();
    const auto allocate_ok = registry::FanOut<registry::PluginEndpoint::AllocateCall>(
        kPlugins,
        [&](size_t k, grpc::CompletionQueue* cq) {
          return endpoints[k]->StartAllocate(per_plugin(k), timeout, cq);
        },
        [&](size_t k, registry::PluginEndpoint::AllocateCall& call) {
          return endpoints[k]->FinishAllocate(call).ok();
        });
    allocate_fan_ms.push_back(Ms(Clock::now() - t0));
    for (int k = 0; k < kPlugins; ++k) {
      if (!hints_ok[k] || !allocate_ok[k]) Die("diag: a fanned-out RPC failed");
    }
    for (auto& e : endpoints) {
      if (Status st = e->RemovePod(req.pod_uid(), timeout); !st.ok()) {
        Die("diag remove: " + st.ToString());
      }
    }
  }
  const std::shared_ptr<const state::PodAllocation> pod = rig.host().state().GetPod(last_uid);
  if (pod == nullptr) Die("pod " + last_uid + " is not in the host checkpoint");
  const std::string diag_path = rig.StateDir() + "/diag.json";
  for (int i = 0; i < 20; ++i) {
    rapidjson::Document doc;
    Clock::time_point t0 = Clock::now();
    if (Status st = state::EncodePod(*pod, doc); !st.ok()) Die(st.ToString());
    encode_ms.push_back(Ms(Clock::now() - t0));
    t0 = Clock::now();
    if (Status st = checkpoint::Write(diag_path, 1, doc); !st.ok()) Die(st.ToString());
    host_write_ms.push_back(Ms(Clock::now() - t0));
    t0 = Clock::now();
    if (Status st = checkpoint::Write(floor_path, 1, floor_data); !st.ok()) Die(st.ToString());
    floor_ms.push_back(Ms(Clock::now() - t0));
  }
  const auto [bare_one, bare_all] = BareRoundMs(endpoints);
  Note(
      "P5{} protocol floor (p50): a bare call (GetResourcePluginOptions) {:.3f} ms, x3 in "
      "parallel {:.3f} ms; Admit makes two such rounds",
      tag, bare_one, bare_all);
  out.rpc_floor_ms = 2 * bare_all;
  Note(
      "P5{} breakdown (p50): GetTopologyHints RPC {:.3f} ms, x3 in parallel {:.3f} ms; "
      "Allocate RPC (the plugin's durable write included) {:.3f} ms, x3 in parallel {:.3f} ms; "
      "host checkpoint file of one pod (of {}): encode "
      "{:.3f} ms + checkpoint::Write {:.3f} ms (4 KiB floor now {:.3f} ms)",
      tag, Percentile(hints_ms, 0.5), Percentile(hints_fan_ms, 0.5), Percentile(allocate_ms, 0.5),
      Percentile(allocate_fan_ms, 0.5), rig.host().state().Snapshot().size(),
      Percentile(encode_ms, 0.5), Percentile(host_write_ms, 0.5), Percentile(floor_ms, 0.5));
  return out;
}

}  // namespace
}  // namespace qrm::bench

int main(int argc, char** argv) {
  using namespace qrm::bench;
  Settings s;
  s.dir = ExeDir();
  const CommonFlags flags =
      ParseFlags(argc, argv,
                 {{"--iterations", [&](const char* v) { s.iterations = std::atoi(v); }},
                  {"--warmup", [&](const char* v) { s.warmup = std::atoi(v); }},
                  {"--dir", [&](const char* v) { s.dir = v; }},
                  {"--tmpfs-dir", [&](const char* v) { s.tmpfs_dir = v; }}});
  s.keep = flags.keep;
  if (s.iterations < 1 || s.warmup < 0) Die("--iterations must be >= 1 and --warmup >= 0");
  qrm::ConfigureLogging("warn");

  if (Wanted(flags.only, {"P5_floor_p50", "P5_floor_p99", "P5_p50", "P5_p99"})) {
    const Samples d = Run(s, s.dir, "");
    const double f50 = Percentile(d.floor_ms, 0.5), f99 = Percentile(d.floor_ms, 0.99);
    const double a50 = Percentile(d.admit_ms, 0.5), a99 = Percentile(d.admit_ms, 0.99);
    Figure("P5_floor_p50", f50, "ms");
    Figure("P5_floor_p99", f99, "ms");
    Figure("P5_p50", a50, "ms", a50 / f50);
    Figure("P5_p99", a99, "ms", a99 / f99);
  }
  if (Wanted(flags.only, {"P5_tmpfs_p50", "P5_tmpfs_p99", "P5_tmpfs_rpc_floor"})) {
    struct statfs fs {};
    if (::statfs(s.tmpfs_dir.c_str(), &fs) != 0 || fs.f_type != kTmpfsMagic) {
      Note("P5_tmpfs: warning: {} is not a tmpfs ({})", s.tmpfs_dir, FilesystemOf(s.tmpfs_dir));
    }
    const Samples t = Run(s, s.tmpfs_dir, "_tmpfs");
    Note("P5_tmpfs: floor on tmpfs p50 {:.3f} ms, p99 {:.3f} ms", Percentile(t.floor_ms, 0.5),
         Percentile(t.floor_ms, 0.99));
    Figure("P5_tmpfs_p50", Percentile(t.admit_ms, 0.5), "ms");
    Figure("P5_tmpfs_p99", Percentile(t.admit_ms, 0.99), "ms");
    // What the tmpfs admission cannot go below: its two rounds of plugin calls with no work in
    // them (the plugins' code, the merge and the checkpoint all cost nothing here).
    Figure("P5_tmpfs_rpc_floor", t.rpc_floor_ms, "ms");
  }
  return 0;
}
