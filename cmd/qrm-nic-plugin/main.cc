// qrm-nic-plugin: NUMA-affine NICs for containers (docs/nic-plugin.md).
//
//   qrm-nic-plugin [--plugin-dir DIR] [--state-dir DIR] [--roles JSON | --roles-file FILE]
//                  [--resource-name NAME] [--bandwidth-resource-name NAME]
//                  [--bandwidth-ratio R] [--nic-allowlist eth0,ns1/eth1] [--include-virtual]
//                  [--unknown-nic-speed-mbps N] [--sysfs-root DIR] [--netns-dir DIR] ...
#include <cstdint>
#include <iostream>
#include <string>

#include <boost/program_options.hpp>

#include "common/config/config.h"
#include "common/log.h"
#include "machine/discovery.h"
#include "plugins/nic/nic_plugin.h"
#include "plugins/sdk/plugin_flags.h"
#include "plugins/sdk/run.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kProgram = "qrm-nic-plugin";

int UsageError(const std::string& message) {
  std::cerr << kProgram << ": " << message << "\n";
  return 2;
}

// --check-config: everything Create validates against the machine, with no state directory
// (nothing read or written).
int CheckConfig(qrm::nic::NicPluginConfig config, const qrm::machine::MachineTopology& machine) {
  // At start an allowlist entry that matches nothing is a warning (the NIC may be renamed or
  // arrive later); a check names it, since the configuration does not fit this machine.
  std::vector<std::string> warnings;
  (void)qrm::nic::BuildInventory(machine, config, &warnings);
  if (!warnings.empty()) return UsageError(warnings.front());
  config.state_dir.clear();
  auto plugin = qrm::nic::NicPlugin::Create(config, machine);
  if (!plugin.ok()) return UsageError(plugin.status().message());
  std::cout << qrm::config::CheckConfigOk(kProgram, machine.Summary());
  return 0;
}

// Everything the command line and the config file set.
struct Flags {
  qrm::sdk::PluginFlags process{{.state_dir = qrm::nic::kDefaultStateDir}};
  qrm::nic::NicPluginConfig config;
  std::string allowlist;
};

// What the plugin serves: resource names, bandwidth accounting, which NICs.
void AddNicFlags(po::options_description& desc, Flags& f) {
  auto add = desc.add_options();
  add("resource-name", po::value(&f.config.resource_name)->default_value(qrm::kNicResourceName),
      "the resource this plugin serves");
  add("bandwidth-resource-name",
      po::value(&f.config.bandwidth_resource_name)->default_value(qrm::kNicBandwidthResourceName),
      "resource requesting NIC bandwidth in Mb/s (\"\" turns bandwidth accounting off)");
  add("bandwidth-ratio", po::value(&f.config.bandwidth_ratio)->default_value(1.0),
      "share of a NIC's link speed that may be allocated");
  add("nic-allowlist", po::value(&f.allowlist)->default_value(""),
      "serve only these NICs (\"eth0,ns1/eth1\"; empty: all)");
  add("include-virtual", po::bool_switch(&f.process.discovery.include_virtual_nics),
      "also serve NICs without a device (veth, bridges, ...)");
  add("unknown-nic-speed-mbps",
      po::value(&f.process.discovery.unknown_nic_speed_mbps)->default_value(0),
      "speed assumed for a NIC whose link speed the kernel does not know");
}

// Logging, the role table and the allowlist; then the whole configuration is validated.
qrm::Status FinishFlags(Flags& f) {
  QRM_RETURN_IF_ERROR(f.process.Finish());
  f.config.roles = f.process.roles;
  f.config.state_dir = f.process.state_dir;
  f.config.reset_state = f.process.reset_state;
  f.config.journal_options.sync = f.process.journal.sync;
  QRM_ASSIGN_OR_RETURN(f.config.allowlist, qrm::nic::ParseNicAllowlist(f.allowlist));
  f.process.discovery.discover_nics = true;
  return f.config.Validate();
}

}  // namespace

int main(int argc, char** argv) {
  qrm::sdk::TuneMallocForPlugin();
  Flags flags;
  po::options_description desc("qrm-nic-plugin options");
  flags.process.Add(desc);
  AddNicFlags(desc, flags);
  auto parsed = qrm::config::Parse(argc, argv, desc);
  if (!parsed.ok()) return UsageError(parsed.status().message());
  if (parsed->exit) {
    std::cout << parsed->output;  // --help or --print-config
    return 0;
  }
  if (qrm::Status s = FinishFlags(flags); !s.ok()) return UsageError(s.message());

  auto log = qrm::Logger("nic-plugin");
  auto machine = qrm::machine::Discover(flags.process.discovery);
  if (!machine.ok()) {
    log->error("cannot start: machine discovery: {}", machine.status().ToString());
    return 1;
  }
  for (const std::string& w : machine->warnings) log->warn("discovery: {}", w);
  if (parsed->check_only) {
    (void)qrm::ConfigureLogging("warn", flags.process.log_format);
    return CheckConfig(flags.config, *machine);
  }
  log->info("machine: {}", machine->Summary());

  // Restore before serving: the host must never see a plugin that forgot what it handed out.
  auto plugin = qrm::nic::NicPlugin::Create(flags.config, *machine);
  if (!plugin.ok()) {
    log->error("cannot start: {}", plugin.status().ToString());
    return 1;
  }
  return qrm::sdk::Run(**plugin, flags.process.server);
}
