#include "plugins/cpu/cpu_plugin_config.h"

#include <fmt/format.h>

#include "common/quote.h"
#include "plugins/cpu/cpu_ledger.h"
#include "plugins/cpu/pool_control.h"
#include "plugins/cpu/pools.h"

namespace qrm::cpu {

std::string CpuPluginConfig::StatePath() const {
  return state_dir.empty() ? std::string() : state_dir + "/" + kStateFileName;
}

std::string CpuPluginConfig::PoolControlPath() const {
  if (!pool_control_file.empty()) return pool_control_file;
  return state_dir.empty() ? std::string() : state_dir + "/" + kPoolControlFileName;
}

StatusOr<CpuSet> ResolveReservedCpus(const CpuLayout& layout, const CpuPluginConfig& config) {
  const int online = layout.online().Size();
  if (!config.reserved_cpus.empty() && config.reserved_cpu_count != 0) {
    return InvalidArgumentError(
        fmt::format("reserved-cpus {} and reserved-cpu-count {}: set at most one of them",
                    Quote(config.reserved_cpus), config.reserved_cpu_count));
  }
  CpuSet reserved;
  if (!config.reserved_cpus.empty()) {
    StatusOr<CpuSet> parsed = CpuSet::Parse(config.reserved_cpus);
    if (!parsed.ok()) return parsed.status().WithContext("reserved-cpus");
    const CpuSet missing = parsed->Difference(layout.online());
    if (!missing.Empty()) {
      return InvalidArgumentError(
          fmt::format("reserved-cpus {}: CPUs {} are not online on this machine (online: {})",
                      Quote(config.reserved_cpus), missing.ToString(), layout.online().ToString()));
    }
    reserved = *parsed;
  } else if (config.reserved_cpu_count != 0) {
    if (config.reserved_cpu_count < 0 || config.reserved_cpu_count >= online) {
      return InvalidArgumentError(fmt::format(
          "reserved-cpu-count {}: must be from 0 to {} (the machine has {} online CPUs)",
          config.reserved_cpu_count, online - 1, online));
    }
    reserved =
        TakeSpread(layout, layout.online(), config.reserved_cpu_count, TakeOrder::kLowestFirst);
  }
  // The shared pool needs a CPU. A reclaimed pool needs none by default (auto: CPUs only while
  // reclaimed_cores containers run, taken from the shared pool); an explicit size is checked
  // against what is left under its own key (reclaimed-pool-size).
  if (online - reserved.Size() < kMinSharedCpus) {
    return InvalidArgumentError(fmt::format(
        "reserved CPUs {} leave {} of the {} online CPUs; the shared pool needs at least {}",
        reserved.ToString(), online - reserved.Size(), online, kMinSharedCpus));
  }
  return reserved;
}

}  // namespace qrm::cpu
