// plugin_bench: admission latency of qrm-cpu-plugin through gRPC.
//
// On the 4x32smt fake machine, with 500 containers already placed (400 shared_cores, 50
// reclaimed_cores, 50 dedicated NUMA-bound), it times GetTopologyHints + Allocate of one more
// dedicated NUMA-bound container (removed again after each sample, untimed) and prints
//   PLUGIN_ALLOC_p50, _p99          state directory on tmpfs: the plugin's own cost
//   PLUGIN_ALLOC_disk_p50, _p99     state directory on $TMPDIR: plus the durable write
//   PLUGIN_ALLOC_disk_floor_p50, _p99  in the same directory, interleaved with the admissions:
//                                   one durable journal append of an entry's size, the floor of
//                                   any admission that is durable before it answers
//   PLUGIN_ALLOC_growth             on disk, p50 with 5,000 containers placed / p50 with none:
//                                   whether an admission's cost grows with what is held
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

struct Result {
  double p50 = 0;
  double p99 = 0;
  double floor_p50 = 0;
  double floor_p99 = 0;
};

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

Result Measure(const std::string& id, const std::string& binary, bool tmpfs, int containers,
               int iterations) {
  ScratchDir dir(tmpfs);
  PluginProcess plugin(binary, "4x32smt", dir.path());
  auto& stub = plugin.stub();
  const auto place = [&](int i, double cpus,
                         std::vector<std::pair<std::string, std::string>> annotations) {
    const grpc::Status s =
        Admit(stub, BenchRequest("placed-" + std::to_string(i), "cpu", cpus, annotations));
    if (!s.ok())
      throw std::runtime_error("placing container " + std::to_string(i) + ": " + s.error_message());
  };
  for (int i = 0; i < containers; ++i) {
    if (i % 10 == 0 && i < 500) {
      place(i, 1, kBound);
    } else if (i % 10 == 1) {
      place(i, 1, {{"katalyst.kubewharf.io/qos_level", "reclaimed_cores"}});
    } else {
      place(i, 0.5, {});
    }
  }
  std::vector<double> samples, floor;
  auto journal = qrm::checkpoint::JournalWriter::Start(dir.path() + "/floor.journal", 1);
  if (!journal.ok()) throw std::runtime_error("floor journal: " + journal.status().ToString());
  double cpu_start = 0;
  for (int i = 0; i < iterations + 10; ++i) {
    if (i == 10) cpu_start = plugin.CpuMs();
    const std::string uid = "timed-" + std::to_string(i);
    const auto start = Clock::now();
    const grpc::Status s = Admit(stub, BenchRequest(uid, "cpu", 2, kBound));
    const double ms = Ms(Clock::now() - start);
    if (!s.ok()) throw std::runtime_error("timed admission: " + s.error_message());
    if (i >= 10) samples.push_back(ms);  // the first few warm the channel up
    if (!Remove(stub, uid).ok()) throw std::runtime_error("RemovePod " + uid);
    const rapidjson::Document record = FloorRecord(i);
    const auto f0 = Clock::now();
    if (qrm::Status st = (*journal)->Append(record); !st.ok()) {
      throw std::runtime_error("floor append: " + st.ToString());
    }
    if (i >= 10) floor.push_back(Ms(Clock::now() - f0));
  }
  // Load-independent: the plugin's own CPU time per sample (hints + Allocate + the untimed
  // RemovePod, i.e. two checkpoint writes).
  const double cpu_per_sample = (plugin.CpuMs() - cpu_start) / iterations;
  std::cerr << "# " << id << ": " << containers << " containers placed, " << iterations
            << " samples, state on " << dir.path() << "; plugin CPU per admission+removal "
            << cpu_per_sample << " ms\n";
  return {Percentile(samples, 0.5), Percentile(samples, 0.99), Percentile(floor, 0.5),
          Percentile(floor, 0.99)};
}

void Run(const std::string& id, const std::string& binary, bool tmpfs, int containers,
         int iterations) {
  const Result r = Measure(id, binary, tmpfs, containers, iterations);
  std::printf("%s_p50 %.3f ms\n%s_p99 %.3f ms\n", id.c_str(), r.p50, id.c_str(), r.p99);
  if (!tmpfs) {
    std::printf("%s_floor_p50 %.3f ms\n%s_floor_p99 %.3f ms\n", id.c_str(), r.floor_p50, id.c_str(),
                r.floor_p99);
  }
  std::fflush(stdout);
}

void RunGrowth(const std::string& binary, int iterations) {
  const Result none = Measure("PLUGIN_ALLOC_growth (0 placed)", binary, false, 0, iterations);
  const Result many = Measure("PLUGIN_ALLOC_growth (5000 placed)", binary, false, 5000, iterations);
  std::cerr << "# PLUGIN_ALLOC_growth: p50 " << none.p50 << " ms with none placed, " << many.p50
            << " ms with 5000; p99 " << none.p99 << " / " << many.p99 << " ms\n";
  std::printf("PLUGIN_ALLOC_growth %.3f x\n", many.p50 / none.p50);
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
