// The QRM design document's machine (machine fake shape doc80: 80 CPUs, NUMA0 = 0-39,
// NUMA1 = 40-79, eth0 on NUMA0, eth1 on NUMA1 in netns ns1) with an in-process qrm host and
// the real qrm-cpu-plugin, qrm-memory-plugin and qrm-nic-plugin processes registered with it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "qrm/host/host.h"
#include "testing/machine/fake_machine.h"
#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {

// The role table of the document's three examples (and one exclusive role of qrm's own).
inline constexpr const char* kDocRoles = R"({
  "online-micro_service": {"qos_level": "shared_cores"},
  "ETL": {"qos_level": "reclaimed_cores"},
  "storage-service": {"qos_level": "dedicated_cores", "numa_binding": true,
                      "numa_anti_affinity": ["reranker"]},
  "reranker": {"qos_level": "dedicated_cores", "numa_binding": true,
               "numa_anti_affinity": ["storage-service"]},
  "numa-enhancement": {"qos_level": "dedicated_cores", "numa_binding": true,
                       "numa_anti_affinity": ["*"]},
  "filler": {"qos_level": "dedicated_cores", "numa_binding": true},
  "exclusive-store": {"qos_level": "dedicated_cores", "numa_binding": true,
                      "numa_exclusive": true}
})";

inline constexpr double kGiB = 1024.0 * 1024 * 1024;

class DocMachineFixture : public HostFixture {
 public:
  explicit DocMachineFixture(
      ::qrm::machine::fake::FakeMachineShape shape = ::qrm::machine::fake::Doc80Shape()) {
    auto paths = ::qrm::machine::fake::WriteFakeMachine(shape, File("machine"));
    REQUIRE(paths.ok());
    paths_ = *paths;
  }

  const ::qrm::machine::fake::FakeMachinePaths& fake() const { return paths_; }

  HostOptions DocOptions() const {
    HostOptions o = Options();
    o.sysfs_root = paths_.sysfs_root;
    auto numa = LoadNumaInfo(paths_.sysfs_root);
    REQUIRE(numa.ok());
    o.numa = *numa;
    // The host resolves QoS with the same role table as the plugins (one truth).
    auto roles = qos::RoleTable::Parse(kDocRoles);
    REQUIRE(roles.ok());
    o.admission.roles = std::move(*roles);
    return o;
  }

  // Starts one of the real plugins ("cpu", "memory", "nic") on the fake machine.
  void StartRealPlugin(const std::string& which, std::vector<std::string> flags = {}) {
    std::vector<std::string> argv = {Binary(which),     "--plugin-dir",         plugin_dir(),
                                     "--state-dir",     File("state-" + which), "--sysfs-root",
                                     paths_.sysfs_root, "--procfs-root",        paths_.procfs_root,
                                     "--netns-dir",     paths_.netns_dir,       "--roles",
                                     kDocRoles};
    argv.insert(argv.end(), flags.begin(), flags.end());
    real_plugins_[which] = std::make_unique<ChildProcess>(argv, File(which + "-plugin.log"));
  }
  void StopRealPlugin(const std::string& which) { real_plugins_.erase(which); }
  ChildProcess& real_plugin(const std::string& which) { return *real_plugins_.at(which); }

  static std::string Binary(const std::string& which) {
    if (which == "cpu") return QRM_CPU_PLUGIN;
    if (which == "memory") return QRM_MEMORY_PLUGIN;
    return QRM_NIC_PLUGIN;
  }

  std::string PluginLog(const std::string& which) {
    return qrm::testing::ReadFile(File(which + "-plugin.log"));
  }

 private:
  ::qrm::machine::fake::FakeMachinePaths paths_;
  std::map<std::string, std::unique_ptr<ChildProcess>> real_plugins_;
};

// A pod of the document: one container "container0" with a pod role.
inline admission::ContainerRequest DocPod(const std::string& uid, const std::string& name,
                                          const std::string& role,
                                          std::map<std::string, double> resources) {
  admission::ContainerRequest r;
  r.pod_uid = uid;
  r.pod_name = name;
  r.pod_namespace = "default";
  r.container_name = "container0";
  r.resources = std::move(resources);
  r.annotations["kubernetes.io/pod-role"] = role;
  return r;
}

inline std::string Owned(const admission::AdmissionResult& r, apply::OciProperty p) {
  if (!r.update.owned.contains(p)) return "<not owned>";
  return p == apply::OciProperty::kCpusetCpus ? r.update.resources.cpuset_cpus()
                                              : r.update.resources.cpuset_mems();
}

}  // namespace qrm::host::testing
