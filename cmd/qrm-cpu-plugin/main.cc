// qrm-cpu-plugin: the "cpu" resource plugin (docs/cpu-plugin.md).
//
//   qrm-cpu-plugin [--config FILE] [--reserved-cpus LIST | --reserved-cpu-count N]
//                  [--reclaimed-pool-size N] [--roles JSON | --roles-file FILE] [--state-dir DIR]
//                  ...
//   qrm-cpu-plugin --set-pools reclaimed=52[,shared=M] [--pool-control-file F | --state-dir D]
//
// The second form validates the sizes, writes the pool control file atomically and exits; the
// running plugin picks the file up and resizes its pools.
#include <charconv>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <boost/program_options.hpp>
#include <malloc.h>

#include "common/config/config.h"
#include "common/log.h"
#include "common/stop_signals.h"
#include "machine/discovery.h"
#include "plugins/cpu/cpu_plugin.h"
#include "plugins/cpu/pool_control.h"
#include "plugins/cpu/pool_control_watcher.h"
#include "plugins/sdk/plugin_flags.h"
#include "plugins/sdk/run.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kProgram = "qrm-cpu-plugin";
constexpr const char* kDefaultStateDir = "/var/lib/qrm/cpu";

struct Flags {
  qrm::sdk::PluginFlags process{{
      .state_dir = kDefaultStateDir,
      .reset_state_help =
          "move an existing ledger aside and start with no containers (after draining the node)",
  }};
  qrm::cpu::CpuPluginConfig plugin;
  std::string reclaimed_pool_size;
  std::string set_pools;
};

po::options_description Describe(Flags& f) {
  po::options_description desc(std::string(kProgram) + " options");
  f.process.Add(desc);
  auto add = desc.add_options();
  add("reserved-cpus", po::value(&f.plugin.reserved_cpus)->default_value(""),
      "CPUs for system_cores and the node's daemons, e.g. 0-1,40-41");
  add("reserved-cpu-count", po::value(&f.plugin.reserved_cpu_count)->default_value(0),
      "reserve this many CPUs instead: whole cores, spread over NUMA nodes, lowest ids");
  add("reclaimed-pool-size", po::value(&f.reclaimed_pool_size),
      "CPUs of the reclaimed pool, or auto (default: the ledger's setting, else auto: none "
      "until a reclaimed_cores container is placed, then up to 4; 0: reclaimed_cores share the "
      "shared pool)");
  add("pool-control-file", po::value(&f.plugin.pool_control_file)->default_value(""),
      "watched pool control file (default <state-dir>/pools.json)");
  add("set-pools", po::value(&f.set_pools),
      "write the pool control file (reclaimed=N[,shared=M]) and exit");
  return desc;
}

// What PluginFlags read that the CPU plugin's own configuration carries.
void TakeProcessFlags(Flags& f) {
  f.plugin.state_dir = f.process.state_dir;
  f.plugin.reset_state = f.process.reset_state;
  f.plugin.journal_options.sync = f.process.journal.sync;
  f.plugin.roles_json = f.process.roles_json;
  f.plugin.roles_file = f.process.roles_file;
  f.process.discovery.discover_nics = false;
}

// "auto" or a whole number (negative ones are refused by name later, with the others).
std::optional<int> ParseReclaimedSize(const std::string& text) {
  if (text == "auto") return qrm::cpu::kReclaimedAuto;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == qrm::cpu::kReclaimedAuto) {
    return std::nullopt;
  }
  return value;
}

// --set-pools: validate, write the control file atomically, report, exit.
int SetPools(const Flags& f) {
  auto sizes = qrm::cpu::ParseSetPools(f.set_pools);
  if (!sizes.ok()) {
    std::cerr << kProgram << ": " << sizes.status().message() << "\n";
    return 2;
  }
  // Sizes the machine cannot have are refused here; whether they fit next to the dedicated
  // containers only the running plugin knows (it logs and keeps the old sizes otherwise).
  if (auto topology = qrm::machine::Discover(f.process.discovery); topology.ok()) {
    const int online = topology->NumCpus();
    for (const auto& [key, size] :
         {std::pair{"reclaimed", sizes->reclaimed}, std::pair{"shared", sizes->shared}}) {
      if (size && *size >= online) {
        std::cerr << kProgram << ": --set-pools: " << key << "=" << *size
                  << ": the machine has only " << online << " online CPUs\n";
        return 2;
      }
    }
  }
  const std::string path = f.plugin.PoolControlPath();
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (qrm::Status s = qrm::cpu::WritePoolControlFile(path, *sizes); !s.ok()) {
    std::cerr << kProgram << ": " << s.ToString() << "\n";
    return 1;
  }
  std::cout << "wrote " << path << ": " << qrm::cpu::FormatPoolControl(*sizes);
  return 0;
}

// --check-config: everything Create validates against the machine, with no state directory
// (nothing read, written or watched).
int CheckConfig(const qrm::machine::MachineTopology& topology, qrm::cpu::CpuPluginConfig config) {
  config.state_dir.clear();
  config.pool_control_file.clear();
  auto plugin = qrm::cpu::CpuPlugin::Create(topology, config);
  if (!plugin.ok()) {
    std::cerr << kProgram << ": " << plugin.status().message() << "\n";
    return 2;
  }
  std::cout << qrm::config::CheckConfigOk(kProgram, topology.Summary());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  qrm::sdk::TuneMallocForPlugin();
  Flags f;
  po::options_description desc = Describe(f);
  auto parsed = qrm::config::Parse(argc, argv, desc);
  if (!parsed.ok()) {
    std::cerr << kProgram << ": " << parsed.status().message() << "\n";
    return 2;
  }
  if (parsed->exit) {
    std::cout << parsed->output;
    return 0;
  }
  if (qrm::Status s = f.process.Finish(); !s.ok()) {
    std::cerr << kProgram << ": " << s.message() << "\n";
    return 2;
  }
  TakeProcessFlags(f);
  if (parsed->vm.count("set-pools")) return SetPools(f);

  auto log = qrm::Logger("cpu-plugin");
  if (parsed->vm.count("reclaimed-pool-size")) {
    auto size = ParseReclaimedSize(f.reclaimed_pool_size);
    if (!size) {
      std::cerr << kProgram << ": --reclaimed-pool-size \"" << f.reclaimed_pool_size
                << "\": expected auto or a whole number of CPUs\n";
      return 2;
    }
    f.plugin.reclaimed_pool_size = *size;
  }
  auto topology = qrm::machine::Discover(f.process.discovery);
  if (!topology.ok()) {
    log->error("cannot read the machine: {}", topology.status().ToString());
    return 1;
  }
  if (parsed->check_only) {
    (void)qrm::ConfigureLogging("warn", f.process.log_format);
    return CheckConfig(*topology, f.plugin);
  }
  log->info("machine: {}", topology->Summary());
  auto plugin = qrm::cpu::CpuPlugin::Create(*topology, f.plugin);
  if (!plugin.ok()) {
    log->error("cannot start: {}", plugin.status().ToString());
    return plugin.status().code() == qrm::StatusCode::kInvalidArgument ? 2 : 1;
  }

  // Block the signals before the watcher thread exists, so that only Run's sigwait sees them.
  qrm::BlockStopSignals();

  std::optional<qrm::cpu::PoolControlWatcher> watcher;
  if (const std::string& path = (*plugin)->pool_control_path(); !path.empty()) {
    watcher.emplace(path, [&plugin] { (void)(*plugin)->ReloadPoolControlFile(); });
    if (qrm::Status s = watcher->Start(); !s.ok()) {
      log->error("cannot watch the pool control file {}: {}", path, s.ToString());
      return 1;
    }
    // A file written between Create's read and the watch being set up.
    if (std::filesystem::exists(path)) (void)(*plugin)->ReloadPoolControlFile();
  }
  const int rc = qrm::sdk::Run(**plugin, f.process.server);
  if (watcher) watcher->Stop();
  return rc;
}
