// qrm-example-accel-plugin: the SDK's example resource plugin.
//
// Every NUMA node of the machine gets --slots-per-node "accelerator slots";
// containers request them as an extended resource (default
// example.qrm.io/accel-slots) and receive ACCEL_SLOTS / ACCEL_NUMA_NODES in
// their environment. See docs/plugin-authoring.md for a walk through the code.
//
//   qrm-example-accel-plugin [--plugin-dir DIR] [--resource NAME]
//                            [--numa-nodes LIST|auto] [--slots-per-node K]
//                            [--state FILE] [--log-level LEVEL]
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "common/id_list.h"
#include "common/log.h"
#include "examples/accelerator-slots/accel_plugin.h"
#include "plugins/sdk/run.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kSysfsNodeOnline = "/sys/devices/system/node/online";

// The machine's NUMA nodes as the kernel lists them ("0-1"). A kernel without
// NUMA support has no such file: the whole machine is node 0.
// (The shared topology discovery library, plugins/machine, arrives later; a
// plugin of your own would use it instead.)
qrm::StatusOr<qrm::NumaMask> OnlineNumaNodes() {
  std::ifstream in(kSysfsNodeOnline);
  if (!in) return qrm::NumaMask().With(0);
  std::stringstream text;
  text << in.rdbuf();
  auto nodes = qrm::NumaMask::Parse(qrm::TrimSysfsValue(text.str()));
  if (!nodes.ok()) return nodes.status().WithContext(kSysfsNodeOnline);
  return nodes;
}

}  // namespace

int main(int argc, char** argv) {
  qrm::example::AccelConfig config;
  qrm::sdk::PluginServerOptions server;
  std::string numa_nodes;
  std::string log_level;

  po::options_description desc("qrm-example-accel-plugin options");
  auto add = desc.add_options();
  add("help,h", "print this help");
  add("plugin-dir", po::value(&server.plugin_dir)->default_value(qrm::sdk::kDefaultPluginDir),
      "directory of the host's registration socket and of ours");
  add("resource", po::value(&config.resource)->default_value(qrm::example::kDefaultResource),
      "extended resource name this plugin serves");
  add("numa-nodes", po::value(&numa_nodes)->default_value("0-1"),
      "NUMA node list (\"0-1,3\"), or \"auto\" to read /sys/devices/system/node/online");
  add("slots-per-node", po::value(&config.slots_per_node)->default_value(4),
      "accelerator slots on each NUMA node");
  add("state", po::value(&config.state_path), "state file (default <plugin-dir>/accel-slots.json)");
  add("log-level", po::value(&log_level)->default_value("info"),
      "trace, debug, info, warn, error, critical or off");

  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "qrm-example-accel-plugin: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (!qrm::ConfigureLogging(log_level)) {
    std::cerr << "qrm-example-accel-plugin: unknown --log-level \"" << log_level << "\"\n";
    return 2;
  }

  auto nodes = numa_nodes == "auto" ? OnlineNumaNodes() : qrm::NumaMask::Parse(numa_nodes);
  if (!nodes.ok()) {
    std::cerr << "qrm-example-accel-plugin: --numa-nodes: " << nodes.status().ToString() << "\n";
    return 2;
  }
  config.numa_nodes = *nodes;
  // The state file sits next to the sockets by default: the host's stale
  // socket purge only ever removes sockets, never other files.
  if (config.state_path.empty()) config.state_path = server.plugin_dir + "/accel-slots.json";

  // Restore before serving: the host must never see a plugin that has
  // forgotten what it handed out.
  auto plugin = qrm::example::AccelPlugin::Create(config);
  if (!plugin.ok()) {
    qrm::Logger("accel-slots")->error("cannot start: {}", plugin.status().ToString());
    return 1;
  }
  // Serves the plugin and keeps it registered until SIGTERM or SIGINT. Run
  // must come before anything starts threads (it blocks those signals).
  return qrm::sdk::Run(**plugin, server);
}
