// PluginFlags: the flags every plugin process takes, declared once, so that every plugin's
// --help, config file keys (--config FILE, common/config/config.h) and error lines agree
// (docs/configuration.md):
//
//   --plugin-dir --socket-name --no-register --metrics-address   where it serves and registers
//   --state-dir --reset-state --state-sync                        where its state lives
//   --log-level --log-format                                      how it logs
//   --sysfs-root --procfs-root --netns-dir                        what machine discovery reads
//   --roles --roles-file                                          the QoS role table
//
//   qrm::sdk::PluginFlags flags({.state_dir = "/var/lib/my-plugin"});
//   po::options_description desc("my-plugin options");
//   flags.Add(desc);
//   desc.add_options()("slots", po::value(&slots));     // the plugin's own options
//   auto parsed = qrm::config::Parse(argc, argv, desc);
//   ... if (Status s = flags.Finish(); !s.ok()) { usage error } ...
//   return qrm::sdk::Run(plugin, flags.server);
#pragma once

#include <string>

#include <boost/program_options.hpp>

#include "checkpoint/journal.h"
#include "common/status.h"
#include "machine/discovery.h"
#include "plugins/sdk/plugin_server.h"
#include "qos/qos_requirement.h"

namespace qrm::sdk {

// --state-sync's values (pod_ledger.h, "Durability").
inline constexpr const char* kStateSyncHostReplays = "host-replays";
inline constexpr const char* kStateSyncEveryChange = "every-change";

// What differs between plugins.
struct PluginFlagDefaults {
  std::string state_dir;  // --state-dir's default
  // What --reset-state does with this plugin's state, for --help.
  std::string reset_state_help = "set aside state files that cannot be restored and start empty";
  bool discovery = true;  // --sysfs-root, --procfs-root, --netns-dir
  bool roles = true;      // --roles, --roles-file
};

class PluginFlags {
 public:
  explicit PluginFlags(PluginFlagDefaults defaults = {}) : defaults_(std::move(defaults)) {}

  // Declares the flags in `desc`; their targets are the members below.
  void Add(boost::program_options::options_description& desc);
  // After config::Parse: configures logging, loads the role table and sets journal.sync.
  // kInvalidArgument naming the flag and its value (an unknown log level or --state-sync, a
  // malformed or unreadable role table).
  Status Finish();

  PluginServerOptions server;
  machine::DiscoveryOptions discovery;
  std::string state_dir;
  bool reset_state = false;
  std::string state_sync;
  checkpoint::JournalOptions journal;  // sync set by Finish from --state-sync
  std::string log_level = "info";
  std::string log_format = "text";
  std::string roles_json;
  std::string roles_file;
  qos::RoleTable roles;  // loaded by Finish

 private:
  PluginFlagDefaults defaults_;
  bool no_register_ = false;
};

}  // namespace qrm::sdk
