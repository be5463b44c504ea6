// qrm-memory-plugin: per-NUMA memory accounting and cpuset.mems (docs/memory-plugin.md).
//
//   qrm-memory-plugin [--plugin-dir DIR] [--state-dir DIR] [--roles JSON | --roles-file FILE]
//                     [--reserved-memory 500Mi|0=500Mi,1=1Gi] [--reset-state]
//                     [--sysfs-root DIR] [--procfs-root DIR] ...
#include <iostream>
#include <string>

#include <boost/program_options.hpp>

#include "common/config/config.h"
#include "common/log.h"
#include "machine/discovery.h"
#include "plugins/memory/memory_plugin.h"
#include "plugins/sdk/run.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kProgram = "qrm-memory-plugin";

int UsageError(const std::string& message) {
  std::cerr << kProgram << ": " << message << "\n";
  return 2;
}

// --check-config: everything Create validates against the machine, with no state directory
// (nothing read or written).
int CheckConfig(qrm::memory::MemoryPluginConfig config,
                const qrm::machine::MachineTopology& machine) {
  config.state_dir.clear();
  auto plugin = qrm::memory::MemoryPlugin::Create(config, machine);
  if (!plugin.ok()) return UsageError(plugin.status().message());
  std::cout << qrm::config::CheckConfigOk(kProgram, machine.Summary());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  qrm::sdk::TuneMallocForPlugin();
  qrm::sdk::PluginServerOptions server;
  qrm::machine::DiscoveryOptions discovery;
  qrm::memory::MemoryPluginConfig config;
  std::string roles_json, roles_file, reserved, log_level, log_format;
  bool no_register = false;

  po::options_description desc("qrm-memory-plugin options");
  auto add = desc.add_options();
  add("plugin-dir", po::value(&server.plugin_dir)->default_value(qrm::sdk::kDefaultPluginDir),
      "directory of the host's registration socket and of ours");
  add("socket-name", po::value(&server.socket_name)->default_value(""),
      "our socket's file name in --plugin-dir (default: memory.sock)");
  add("no-register", po::bool_switch(&no_register), "serve only; do not call Register on the host");
  add("state-dir", po::value(&config.state_dir)->default_value(qrm::memory::kDefaultStateDir),
      "directory of the state files (memory_plugin_state and its journal)");
  add("reset-state", po::bool_switch(&config.reset_state),
      "set aside a checkpoint that cannot be restored and start empty");
  add("sysfs-root", po::value(&discovery.sysfs_root)->default_value("/sys"), "sysfs to read");
  add("procfs-root", po::value(&discovery.procfs_root)->default_value("/proc"), "procfs to read");
  add("netns-dir", po::value(&discovery.netns_dir)->default_value("/var/run/netns"),
      "directory of named network namespaces (unused by this plugin; accepted like the others)");
  add("log-level", po::value(&log_level)->default_value("info"),
      "trace, debug, info, warn, error, critical or off");
  add("log-format", po::value(&log_format)->default_value("text"), "text or json");
  add("metrics-address", po::value(&server.metrics_address)->default_value(""),
      "IP:PORT for /metrics, /healthz, /readyz (loopback; empty disables)");
  add("roles", po::value(&roles_json)->default_value(""),
      "role table (JSON object: role -> {qos_level, numa_binding, numa_exclusive, "
      "numa_anti_affinity})");
  add("roles-file", po::value(&roles_file)->default_value(""),
      "file holding the role table JSON (the same file qrm-host's --roles-file names)");
  add("reserved-memory", po::value(&reserved)->default_value("500Mi"),
      "memory kept back on each NUMA node: \"500Mi\", \"0=500Mi,1=1Gi\" or \"1Gi,1=2Gi\"");

  auto parsed = qrm::config::Parse(argc, argv, desc);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  if (parsed->exit) {
    std::cout << parsed->output;  // --help or --print-config
    return 0;
  }
  if (!qrm::ConfigureLogging(log_level, log_format)) {
    return UsageError("unknown --log-level \"" + log_level + "\" or --log-format \"" + log_format +
                      "\"");
  }
  auto roles = qrm::qos::LoadRoleTable(roles_json, roles_file);
  if (!roles.ok()) return UsageError(roles.status().message());
  config.roles = std::move(*roles);
  auto reservation = qrm::memory::ParseReservedMemory(reserved);
  if (!reservation.ok()) return UsageError(reservation.status().message());
  config.reserved = std::move(*reservation);
  server.register_with_host = !no_register;

  auto log = qrm::Logger("memory-plugin");
  discovery.discover_nics = false;  // not ours
  auto machine = qrm::machine::Discover(discovery);
  if (!machine.ok()) {
    log->error("cannot start: machine discovery: {}", machine.status().ToString());
    return 1;
  }
  for (const std::string& w : machine->warnings) log->warn("discovery: {}", w);
  if (parsed->check_only) {
    (void)qrm::ConfigureLogging("warn", log_format);
    return CheckConfig(config, *machine);
  }
  log->info("machine: {}", machine->Summary());

  // Restore before serving: the host must never see a plugin that forgot what it handed out.
  auto plugin = qrm::memory::MemoryPlugin::Create(config, *machine);
  if (!plugin.ok()) {
    log->error("cannot start: {}", plugin.status().ToString());
    return 1;
  }
  return qrm::sdk::Run(**plugin, server);
}
