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
#include "plugins/sdk/plugin_flags.h"
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
  qrm::sdk::PluginFlags flags({.state_dir = qrm::memory::kDefaultStateDir});
  std::string reserved;
  po::options_description desc("qrm-memory-plugin options");
  flags.Add(desc);
  desc.add_options()(
      "reserved-memory", po::value(&reserved)->default_value("500Mi"),
      "memory kept back on each NUMA node: \"500Mi\", \"0=500Mi,1=1Gi\" or \"1Gi,1=2Gi\"");

  auto parsed = qrm::config::Parse(argc, argv, desc);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  if (parsed->exit) {
    std::cout << parsed->output;  // --help or --print-config
    return 0;
  }
  if (qrm::Status s = flags.Finish(); !s.ok()) return UsageError(s.message());
  auto reservation = qrm::memory::ParseReservedMemory(reserved);
  if (!reservation.ok()) return UsageError(reservation.status().message());
  qrm::memory::MemoryPluginConfig config;
  config.reserved = std::move(*reservation);
  config.roles = flags.roles;
  config.state_dir = flags.state_dir;
  config.reset_state = flags.reset_state;
  config.journal_options.sync = flags.journal.sync;

  auto log = qrm::Logger("memory-plugin");
  flags.discovery.discover_nics = false;  // not ours
  auto machine = qrm::machine::Discover(flags.discovery);
  if (!machine.ok()) {
    log->error("cannot start: machine discovery: {}", machine.status().ToString());
    return 1;
  }
  for (const std::string& w : machine->warnings) log->warn("discovery: {}", w);
  if (parsed->check_only) {
    (void)qrm::ConfigureLogging("warn", flags.log_format);
    return CheckConfig(config, *machine);
  }
  log->info("machine: {}", machine->Summary());

  // Restore before serving: the host must never see a plugin that forgot what it handed out.
  auto plugin = qrm::memory::MemoryPlugin::Create(config, *machine);
  if (!plugin.ok()) {
    log->error("cannot start: {}", plugin.status().ToString());
    return 1;
  }
  return qrm::sdk::Run(**plugin, flags.server);
}
