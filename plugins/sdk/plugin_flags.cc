#include "plugins/sdk/plugin_flags.h"

#include <fmt/format.h>

#include "common/config/config.h"
#include "common/log.h"
#include "common/quote.h"

namespace qrm::sdk {

namespace po = boost::program_options;

void PluginFlags::Add(po::options_description& desc) {
  auto add = desc.add_options();
  add("plugin-dir", po::value(&server.plugin_dir)->default_value(kDefaultPluginDir),
      "directory of the host's registration socket and of ours");
  add("socket-name", po::value(&server.socket_name)->default_value(""),
      "our socket's file name in --plugin-dir (default: <resource name>.sock)");
  add("no-register", po::bool_switch(&no_register_),
      "serve only; do not call Register on the host (it may still find the socket)");
  add("metrics-address", po::value(&server.metrics_address)->default_value(""),
      "IP:PORT for /metrics, /healthz, /readyz (loopback; empty disables)");
  add("state-dir", po::value(&state_dir)->default_value(defaults_.state_dir),
      "directory of the plugin's state files (a snapshot and its journal)");
  add("reset-state", po::bool_switch(&reset_state), defaults_.reset_state_help.c_str());
  add("state-sync", po::value(&state_sync)->default_value(kStateSyncHostReplays),
      "host-replays: each change reaches the state file before the answer, survives a plugin "
      "crash, and what a machine crash loses qrm-host replays; every-change: each change is "
      "also fdatasync'ed before the answer (for a host that does not replay)");
  add("log-level", po::value(&log_level)->default_value("info"),
      "trace, debug, info, warn, error, critical or off");
  add("log-format", po::value(&log_format)->default_value("text"), "text or json");
  if (defaults_.discovery) {
    add("sysfs-root", po::value(&discovery.sysfs_root)->default_value("/sys"),
        "sysfs to read the machine from (a fake tree in tests)");
    add("procfs-root", po::value(&discovery.procfs_root)->default_value("/proc"),
        "procfs to read the machine from");
    add("netns-dir", po::value(&discovery.netns_dir)->default_value("/var/run/netns"),
        "directory of named network namespaces");
  }
  if (defaults_.roles) {
    add("roles", po::value(&roles_json)->default_value(""),
        "role table JSON: role -> {qos_level, numa_binding, numa_exclusive, "
        "numa_anti_affinity}");
    add("roles-file", po::value(&roles_file)->default_value(""),
        "file holding the role table JSON (the same file qrm-host's --roles-file names)");
  }
}

Status PluginFlags::Finish() {
  QRM_RETURN_IF_ERROR(config::CheckLogFlags(log_level, log_format));
  ConfigureLogging(log_level, log_format);
  if (state_sync == kStateSyncEveryChange) {
    journal.sync = true;
  } else if (state_sync == kStateSyncHostReplays) {
    journal.sync = false;
  } else {
    return InvalidArgumentError(fmt::format("--state-sync {}: expected {} or {}", Quote(state_sync),
                                            kStateSyncHostReplays, kStateSyncEveryChange));
  }
  server.register_with_host = !no_register_;
  if (defaults_.roles) {
    QRM_ASSIGN_OR_RETURN(roles, qos::LoadRoleTable(roles_json, roles_file));
  }
  return Status::Ok();
}

}  // namespace qrm::sdk
