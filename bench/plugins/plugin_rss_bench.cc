// plugin_rss_bench: resident memory of a resource plugin process holding 1,000 containers.
//
// Starts BINARY (any of qrm-cpu-plugin, qrm-memory-plugin, qrm-nic-plugin: they share the
// common flags) on the doc80 fake machine with --no-register, admits 1,000 shared_cores
// containers with small requests over gRPC (GetTopologyHints + Allocate), and prints
//   P7p_<cpu|memory|nic> <VmRSS> MiB   (from /proc/PID/status; target <= 20 MiB)
//
//   plugin_rss_bench [--plugin BINARY [--resource NAME]] [--containers N] [--only ID]...
// Without --plugin it measures the three plugins of this build.
// NAME defaults to "cpu"; requests are 0.1 for cpu, 16 MiB for memory and 1 otherwise.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "bench/plugins/plugin_process.h"

namespace {

using namespace qrm::bench;

// Admits `containers` containers into the plugin and prints "<id> <VmRSS> MiB".
int Measure(const std::string& binary, const std::string& resource, int containers,
            const std::string& id) {
  const double quantity = resource == "cpu" ? 0.1 : resource == "memory" ? 16.0 * 1024 * 1024 : 1;
  try {
    ScratchDir dir(true);  // tmpfs: 1,000 durable writes on a disk would only measure the disk
    PluginProcess plugin(binary, "doc80", dir.path());
    int admitted = 0;
    std::string first_error;
    for (int i = 0; i < containers; ++i) {
      const grpc::Status s =
          Admit(plugin.stub(), BenchRequest("pod-" + std::to_string(i), resource, quantity,
                                            {{"katalyst.kubewharf.io/qos_level", "shared_cores"}}));
      if (s.ok()) {
        ++admitted;
      } else if (first_error.empty()) {
        first_error = s.error_message();
      }
    }
    std::cerr << "# " << id << ": " << binary << ", " << admitted << "/" << containers
              << " containers admitted"
              << (first_error.empty() ? "" : " (first error: " + first_error + ")") << "\n";
    std::printf("%s %.1f MiB\n", id.c_str(), plugin.RssMiB());
    return admitted == containers ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "plugin_rss_bench: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string binary;
  std::string resource = "cpu";
  int containers = 1000;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "plugin_rss_bench: " << arg << " needs a value\n";
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "--plugin") {
      binary = value;
    } else if (arg == "--resource") {
      resource = value;
    } else if (arg == "--containers") {
      containers = std::atoi(value.c_str());
    } else if (arg == "--only") {
      only.push_back(value);
    } else {
      std::cerr << "plugin_rss_bench: unknown argument " << arg << "\n";
      return 2;
    }
  }
  // Without --plugin: the three plugins of this build, one figure each.
  std::vector<std::pair<std::string, std::string>> runs;
  if (!binary.empty()) {
    runs.emplace_back(binary, resource);
  } else {
    runs = {{QRM_CPU_PLUGIN, "cpu"}, {QRM_MEMORY_PLUGIN, "memory"}, {QRM_NIC_PLUGIN, "qrm.io/nic"}};
  }
  int rc = 0;
  for (const auto& [plugin_binary, plugin_resource] : runs) {
    std::string name = std::filesystem::path(plugin_binary).filename().string();  // qrm-cpu-plugin
    if (name.rfind("qrm-", 0) == 0) name = name.substr(4);
    if (const size_t dash = name.rfind("-plugin"); dash != std::string::npos) name.resize(dash);
    const std::string id = "P7p_" + name;
    if (!Selected(only, id)) continue;
    rc |= Measure(plugin_binary, plugin_resource, containers, id);
  }
  return rc;
}
