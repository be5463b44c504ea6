// plugin_bench: admission latency of qrm-cpu-plugin through gRPC.
//
// On the 4x32smt fake machine, with 500 containers already placed (400 shared_cores, 50
// reclaimed_cores, 50 dedicated NUMA-bound), it times GetTopologyHints + Allocate of one more
// dedicated NUMA-bound container (removed again after each sample, untimed) and prints
//   PLUGIN_ALLOC_p50, _p99          state directory on tmpfs: the plugin's own cost
//   PLUGIN_ALLOC_disk_p50, _p99     state directory on $TMPDIR: plus the durable write
//   PLUGIN_ALLOC_disk_floor_p50, _p99  in the same directory, after the admissions: one
//                                   durable journal append of an entry's size, the floor of an
//                                   admission that is durable before it answers (the plugins'
//                                   default --state-sync host-replays answers before that)
//   PLUGIN_ALLOC_growth             on disk, p50 with 5,000 containers placed / p50 with none,
//                                   two plugins sampled alternately: whether an admission's
//                                   cost grows with what is held
// (At most 50 placed containers are dedicated, the rest shared and reclaimed: 5,000 dedicated
// CPUs do not exist on the 128-CPU machine.)
//
//   plugin_bench [--plugin BINARY] [--containers N] [--iterations N] [--only ID]...
#include <cstdlib>
#include <iostream>

#include "bench/plugins/plugin_process.h"
#include "checkpoint/journal.h"

namespace {

using namespace qrm::bench;

const std::vector<std::pair<std::string, std::string>> kBound = {
    {"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
    {"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding":"true"})"}};

// A record the size of a dedicated container's ledger entry.
rapidjson::Document FloorRecord(int i) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  const std::string uid = "timed-" + std::to_string(i) + "-0000-0000-0000-000000000000";
  d.AddMember("op", "put", a);
  d.AddMember("pod", rapidjson::Value(uid.c_str(), a), a);
  d.AddMember("container", "main", a);
  rapidjson::Value e(rapidjson::kObjectType);
  e.AddMember("cpuset", "2-3", a);
  e.AddMember("numa_binding", true, a);
  e.AddMember("numa_nodes", "0", a);
  e.AddMember("pod_name", "timed-pod", a);
  e.AddMember("pod_namespace", "default", a);
  e.AddMember("qos_level", "dedicated_cores", a);
  e.AddMember("request_milli", 2000, a);
  d.AddMember("entry", e, a);
  return d;
}

// A CPU plugin with `containers` placed, timed one admission at a time.
class PlacedPlugin {
 public:
  PlacedPlugin(const std::string& binary, bool tmpfs, int containers)
      : dir_(tmpfs), plugin_(binary, "4x32smt", dir_.path()) {
    for (int i = 0; i < containers; ++i) {
      if (i % 10 == 0 && i < 500) {
        Place(i, 1, kBound);
      } else if (i % 10 == 1) {
        Place(i, 1, {{"katalyst.kubewharf.io/qos_level", "reclaimed_cores"}});
      } else {
        Place(i, 0.5, {});
      }
    }
  }

  // GetTopologyHints + Allocate of one more dedicated NUMA-bound container, in ms; removed
  // again, untimed.
  double Sample(int i) {
    const std::string uid = "timed-" + std::to_string(i);
    const auto start = Clock::now();
    const grpc::Status s = Admit(plugin_.stub(), BenchRequest(uid, "cpu", 2, kBound));
    const double ms = Ms(Clock::now() - start);
    if (!s.ok()) throw std::runtime_error("timed admission: " + s.error_message());
    if (!Remove(plugin_.stub(), uid).ok()) throw std::runtime_error("RemovePod " + uid);
    return ms;
  }

  const std::string& dir() const { return dir_.path(); }
  double CpuMs() { return plugin_.CpuMs(); }

 private:
  void Place(int i, double cpus, std::vector<std::pair<std::string, std::string>> annotations) {
    const grpc::Status s = Admit(
        plugin_.stub(), BenchRequest("placed-" + std::to_string(i), "cpu", cpus, annotations));
    if (!s.ok()) {
      throw std::runtime_error("placing container " + std::to_string(i) + ": " + s.error_message());
    }
  }

  ScratchDir dir_;
  PluginProcess plugin_;
};

constexpr int kWarmup = 10;  // samples that warm the channel up, not counted

// One durable journal append of an entry's size per sample, in `dir`.
std::vector<double> FloorSamples(const std::string& dir, int iterations) {
  auto journal = qrm::checkpoint::JournalWriter::Start(dir + "/floor.journal", 1);
  if (!journal.ok()) throw std::runtime_error("floor journal: " + journal.status().ToString());
  std::vector<double> floor;
  for (int i = 0; i < iterations; ++i) {
    const rapidjson::Document record = FloorRecord(i);
    const auto f0 = Clock::now();
    if (qrm::Status st = (*journal)->Append(record); !st.ok()) {
      throw std::runtime_error("floor append: " + st.ToString());
    }
    floor.push_back(Ms(Clock::now() - f0));
  }
  return floor;
}

void Run(const std::string& id, const std::string& binary, bool tmpfs, int containers,
         int iterations) {
  PlacedPlugin placed(binary, tmpfs, containers);
  std::vector<double> samples;
  double cpu_start = 0;
  for (int i = 0; i < iterations + kWarmup; ++i) {
    if (i == kWarmup) cpu_start = placed.CpuMs();
    const double ms = placed.Sample(i);
    if (i >= kWarmup) samples.push_back(ms);
  }
  // Load-independent: the plugin's own CPU time per sample (hints + Allocate + the untimed
  // RemovePod, i.e. two ledger records).
  std::cerr << "# " << id << ": " << containers << " containers placed, " << iterations
            << " samples, state on " << placed.dir() << "; plugin CPU per admission+removal "
            << (placed.CpuMs() - cpu_start) / iterations << " ms\n";
  std::printf("%s_p50 %.3f ms\n%s_p99 %.3f ms\n", id.c_str(), Percentile(samples, 0.5), id.c_str(),
              Percentile(samples, 0.99));
  if (!tmpfs) {
    // After the admissions, in the same directory: interleaved, each durable append (the
    // bench's own I/O, and the idle CPU while it waits) slowed the admission after it.
    std::vector<double> floor = FloorSamples(placed.dir(), iterations);
    std::printf("%s_floor_p50 %.3f ms\n%s_floor_p99 %.3f ms\n", id.c_str(), Percentile(floor, 0.5),
                id.c_str(), Percentile(floor, 0.99));
  }
  std::fflush(stdout);
}

// Two plugins, one with none placed and one with 5,000, sampled alternately so that both see
// the same machine (run apart, this machine's p50 moved by 2x between runs).
void RunGrowth(const std::string& binary, int iterations) {
  PlacedPlugin none(binary, false, 0);
  PlacedPlugin many(binary, false, 5000);
  std::vector<double> none_ms, many_ms;
  for (int i = 0; i < iterations + kWarmup; ++i) {
    const double a = none.Sample(i);
    const double b = many.Sample(i);
    if (i < kWarmup) continue;
    none_ms.push_back(a);
    many_ms.push_back(b);
  }
  const double none_p50 = Percentile(none_ms, 0.5), many_p50 = Percentile(many_ms, 0.5);
  std::cerr << "# PLUGIN_ALLOC_growth: state on disk, samples alternating; p50 " << none_p50
            << " ms with none placed, " << many_p50 << " ms with 5000; p99 "
            << Percentile(none_ms, 0.99) << " / " << Percentile(many_ms, 0.99) << " ms\n";
  std::printf("PLUGIN_ALLOC_growth %.3f x\n", many_p50 / none_p50);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string binary = QRM_CPU_PLUGIN;
  int containers = 500;
  int iterations = 300;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "plugin_bench: " << arg << " needs a value\n";
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "--plugin") {
      binary = value;
    } else if (arg == "--containers") {
      containers = std::atoi(value.c_str());
    } else if (arg == "--iterations") {
      iterations = std::atoi(value.c_str());
    } else if (arg == "--only") {
      only.push_back(value);
    } else {
      std::cerr << "plugin_bench: unknown argument " << arg << "\n";
      return 2;
    }
  }
  try {
    if (Selected(only, "PLUGIN_ALLOC")) Run("PLUGIN_ALLOC", binary, true, containers, iterations);
    if (Selected(only, "PLUGIN_ALLOC_disk")) {
      Run("PLUGIN_ALLOC_disk", binary, false, containers, iterations);
    }
    if (Selected(only, "PLUGIN_ALLOC_growth")) RunGrowth(binary, iterations);
  } catch (const std::exception& e) {
    std::cerr << "plugin_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
