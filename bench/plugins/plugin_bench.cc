// plugin_bench: admission latency of qrm-cpu-plugin through gRPC.
//
// On the 4x32smt fake machine, with 500 containers already placed (400 shared_cores, 50
// reclaimed_cores, 50 dedicated NUMA-bound), it times GetTopologyHints + Allocate of one more
// dedicated NUMA-bound container (removed again after each sample, untimed) and prints
//   PLUGIN_ALLOC median_ms=.. p99_ms=..        state directory on tmpfs: the plugin's own cost
//   PLUGIN_ALLOC_disk median_ms=.. p99_ms=..   state directory on $TMPDIR: plus a durable fsync
//
//   plugin_bench [--plugin BINARY] [--containers N] [--iterations N] [--only ID]...
#include <cstdlib>
#include <iostream>

#include "bench/plugins/plugin_process.h"

namespace {

using namespace qrm::bench;

const std::vector<std::pair<std::string, std::string>> kBound = {
    {"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
    {"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding":"true"})"}};

void Run(const std::string& id, const std::string& binary, bool tmpfs, int containers,
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
    if (i % 10 == 0) {
      place(i, 1, kBound);
    } else if (i % 10 == 1) {
      place(i, 1, {{"katalyst.kubewharf.io/qos_level", "reclaimed_cores"}});
    } else {
      place(i, 0.5, {});
    }
  }
  std::vector<double> samples;
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
  }
  // Load-independent: the plugin's own CPU time per sample (hints + Allocate + the untimed
  // RemovePod, i.e. two checkpoint writes).
  const double cpu_per_sample = (plugin.CpuMs() - cpu_start) / iterations;
  std::cerr << "# " << id << ": " << containers << " containers placed, " << iterations
            << " samples, state on " << dir.path() << "; plugin CPU per admission+removal "
            << cpu_per_sample << " ms\n";
  const double median = Percentile(samples, 0.5);
  const double p99 = Percentile(samples, 0.99);
  std::printf("%s_p50 %.3f ms\n%s_p99 %.3f ms\n", id.c_str(), median, id.c_str(), p99);
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
  } catch (const std::exception& e) {
    std::cerr << "plugin_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
