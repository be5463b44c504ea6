// qrm-example-accel-plugin: the SDK's example resource plugin.
//
// Every NUMA node of the machine gets --slots-per-node "accelerator slots";
// containers request them as an extended resource (default
// example.qrm.io/accel-slots) and receive ACCEL_SLOTS / ACCEL_NUMA_NODES in
// their environment. See docs/plugin-authoring.md for a walk through the code.
//
//   qrm-example-accel-plugin [--plugin-dir DIR] [--resource NAME]
//                            [--numa-nodes LIST|auto] [--slots-per-node K]
//                            [--state-dir DIR] [--log-level LEVEL] [--config FILE] ...
#include <iostream>
#include <optional>
#include <string>

#include <boost/program_options.hpp>

#include "common/config/config.h"
#include "common/log.h"
#include "examples/accelerator-slots/accel_plugin.h"
#include "machine/discovery.h"
#include "plugins/sdk/plugin_flags.h"
#include "plugins/sdk/run.h"

namespace po = boost::program_options;

namespace {

// [guide:machine]
// The machine's NUMA nodes, from qrm's topology discovery (qrm::machine): the
// same reading of sysfs the bundled plugins use (--sysfs-root sets where). A kernel without NUMA
// support reports one node 0.
qrm::StatusOr<qrm::NumaMask> MachineNumaNodes(qrm::machine::DiscoveryOptions options) {
  options.discover_nics = false;  // only the nodes matter here
  qrm::StatusOr<qrm::machine::MachineTopology> machine = qrm::machine::Discover(options);
  if (!machine.ok()) return machine.status();
  return machine->NodeMask();
}
// [guide:end]

struct Flags {
  // The flags every plugin takes (--plugin-dir, --state-dir, --log-level, --sysfs-root, ...),
  // the same as the bundled plugins'; this plugin reads no role table.
  qrm::sdk::PluginFlags process{{.state_dir = qrm::example::kDefaultStateDir, .roles = false}};
  qrm::example::AccelConfig config;
  std::string numa_nodes;
};

// Parses the command line (and --config FILE) into `flags`; returns the exit code to stop
// with, if any.
std::optional<int> ParseFlags(int argc, char** argv, Flags& flags) {
  po::options_description desc("qrm-example-accel-plugin options");
  flags.process.Add(desc);
  auto add = desc.add_options();
  add("resource", po::value(&flags.config.resource)->default_value(qrm::example::kDefaultResource),
      "extended resource name this plugin serves");
  add("numa-nodes", po::value(&flags.numa_nodes)->default_value("auto"),
      "NUMA node list (\"0-1,3\"), or \"auto\" for this machine's nodes");
  add("slots-per-node", po::value(&flags.config.slots_per_node)->default_value(4),
      "accelerator slots on each NUMA node");

  auto parsed = qrm::config::Parse(argc, argv, desc);
  if (!parsed.ok()) {
    std::cerr << "qrm-example-accel-plugin: " << parsed.status().message() << "\n";
    return 2;
  }
  if (parsed->exit) {
    std::cout << parsed->output;  // --help or --print-config
    return 0;
  }
  if (qrm::Status s = flags.process.Finish(); !s.ok()) {
    std::cerr << "qrm-example-accel-plugin: " << s.message() << "\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace

// [guide:main]
int main(int argc, char** argv) {
  Flags flags;
  if (std::optional<int> exit_code = ParseFlags(argc, argv, flags)) return *exit_code;

  auto nodes = flags.numa_nodes == "auto" ? MachineNumaNodes(flags.process.discovery)
                                          : qrm::NumaMask::Parse(flags.numa_nodes);
  if (!nodes.ok()) {
    std::cerr << "qrm-example-accel-plugin: --numa-nodes: " << nodes.status().ToString() << "\n";
    return 2;
  }
  qrm::example::AccelConfig& config = flags.config;
  config.numa_nodes = *nodes;
  config.state_path = flags.process.state_dir + "/" + qrm::example::kStateFileName;
  config.reset_state = flags.process.reset_state;
  config.state_sync = flags.process.journal.sync;
  auto log = qrm::Logger("accel-slots");
  // Earlier versions kept the state file in the plugin directory by default.
  const std::string legacy = flags.process.server.plugin_dir + "/" + qrm::example::kStateFileName;
  if (qrm::Status moved = qrm::example::AdoptLegacyStateFile(legacy, config.state_path);
      !moved.ok()) {
    log->error("cannot start: {}", moved.ToString());
    return 1;
  }

  // Restore before serving: the host must never see a plugin that has
  // forgotten what it handed out.
  auto plugin = qrm::example::AccelPlugin::Create(config);
  if (!plugin.ok()) {
    log->error("cannot start: {}", plugin.status().ToString());
    return 1;
  }
  // Serves the plugin and keeps it registered until SIGTERM or SIGINT. Run
  // must come before anything starts threads (it blocks those signals).
  return qrm::sdk::Run(**plugin, flags.process.server);
}
// [guide:end]
