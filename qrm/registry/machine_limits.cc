#include "qrm/registry/machine_limits.h"

#include "machine/numa_layout.h"

namespace qrm::registry {

StatusOr<MachineLimits> LoadMachineLimits(const std::string& sysfs_root) {
  MachineLimits limits;
  QRM_ASSIGN_OR_RETURN(limits.online_cpus, machine::ReadOnlineCpus(sysfs_root));
  QRM_ASSIGN_OR_RETURN(const machine::NumaLayout layout, machine::ReadNumaLayout(sysfs_root));
  limits.numa_nodes = layout.Mask();
  return limits;
}

}  // namespace qrm::registry
