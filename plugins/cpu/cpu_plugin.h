// CpuPlugin: the "cpu" resource plugin (qrm::sdk::ResourcePlugin), served by qrm-cpu-plugin.
//
// Every container gets a cpuset (ResourceAllocationInfo oci_property_name "CpusetCpus"):
//   dedicated_cores  exclusive CPUs (exclusive_cpus.h, dedicated_placement.h)
//   shared_cores     the shared pool (its NUMA nodes' part when NUMA-bound)
//   reclaimed_cores  the reclaimed pool
//   system_cores     the reserved CPUs (the shared pool when none are reserved)
// and pools are recomputed after every change (pools.h). A change that moves pools changes the
// cpuset of every shared/reclaimed container; GetResourcesAllocation reports the new ones and
// the host's reconcile applies them.
//
// Every change is durable (cpu_ledger.h: one journal record, a constant cost whatever the
// number of containers) before the call returns success; when the write fails the in-memory
// state is rolled back and the call fails. One mutex guards the state; the ledger write is the
// only I/O done while holding it.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "common/cpu_set.h"
#include "common/mutex.h"
#include "machine/topology.h"
#include "plugins/cpu/cpu_layout.h"
#include "plugins/cpu/cpu_ledger.h"
#include "plugins/cpu/cpu_plugin_config.h"
#include "plugins/cpu/cpu_request.h"
#include "plugins/cpu/cpu_state.h"
#include "plugins/cpu/pool_control.h"
#include "plugins/sdk/resource_plugin.h"
#include "qos/qos_requirement.h"

namespace qrm::cpu {

class CpuPlugin final : public sdk::ResourcePlugin {
 public:
  // Validates the config against the machine, restores the ledger (refusing one from another
  // CPU layout or one whose dedicated CPUs are now reserved), applies the pool control file if
  // there is one (a bad file is logged and ignored), and writes a snapshot once so that the
  // state file describes the running plugin.
  static StatusOr<std::unique_ptr<CpuPlugin>> Create(const machine::MachineTopology& topology,
                                                     CpuPluginConfig config);

  std::string ResourceName() const override { return kResourceName; }
  ::resourceplugin::v1alpha1::ResourcePluginOptions Options() const override;

  StatusOr<::resourceplugin::v1alpha1::ResourceHintsResponse> GetTopologyHints(
      const ::resourceplugin::v1alpha1::ResourceRequest& req) override;
  StatusOr<::resourceplugin::v1alpha1::ResourceAllocationResponse> Allocate(
      const ::resourceplugin::v1alpha1::ResourceRequest& req) override;
  Status RemovePod(const std::string& pod_uid) override;
  StatusOr<::resourceplugin::v1alpha1::GetResourcesAllocationResponse> GetResourcesAllocation()
      override;
  StatusOr<::resourceplugin::v1alpha1::GetTopologyAwareResourcesResponse> GetTopologyAwareResources(
      const ::resourceplugin::v1alpha1::GetTopologyAwareResourcesRequest& req) override;
  StatusOr<::resourceplugin::v1alpha1::GetTopologyAwareAllocatableResourcesResponse>
  GetTopologyAwareAllocatableResources() override;

  // --- Control interface -------------------------------------------------------------------
  // Resizes the pools (pool_control.h explains "shared"). kInvalidArgument naming the key and
  // value when the sizes do not fit; the old sizes then stay.
  Status ResizePools(const PoolSizes& sizes);
  // Reads the pool control file and applies it. Errors are logged (naming the file, key and
  // value) and returned; the old sizes stay.
  Status ReloadPoolControlFile();
  const std::string& pool_control_path() const { return pool_control_path_; }

  // Writes a snapshot of the ledger now (its machineState view becomes current); sdk::Run
  // calls it at a clean stop.
  Status WriteSnapshot();
  Status OnStop() override { return WriteSnapshot(); }

  // --- Introspection (tests, logs) -----------------------------------------------------------
  CpuPools pools() const;
  int reclaimed_size() const;
  CpuState state() const;
  const CpuSet& reserved() const { return reserved_; }
  const CpuLayout& layout() const { return layout_; }

 private:
  CpuPlugin(CpuLayout layout, CpuSet reserved, qos::RoleTable roles, CpuPluginConfig config);

  // Restores the ledger into state_ and computes the pools (Create).
  Status OpenLedger();
  StatusOr<CpuRequest> Parse(const ::resourceplugin::v1alpha1::ResourceRequest& req) const;
  // What dedicated admission may use in `state`. Called with mu_ held.
  CpuAvailability Availability(const CpuState& state) const;
  // Called with mu_ held after state_ was changed in place: refreshes the pools and makes the
  // change durable with `persist` (one ledger call). On failure `undo` reverts the change, the
  // pools are refreshed again (they are a function of the state, so they come back exactly)
  // and the error is returned.
  Status CommitOrUndo(const std::function<Status()>& persist, const std::function<void()>& undo);
  // The size setting `sizes` asks for, given `state`'s dedicated CPUs.
  StatusOr<PoolSetting> PoolSettingFor(const PoolSizes& sizes, const CpuState& state) const;

  const CpuLayout layout_;
  const CpuSet reserved_;
  const qos::RoleTable roles_;
  const CpuPluginConfig config_;
  const std::string pool_control_path_;

  mutable Mutex mu_;
  CpuState state_ QRM_GUARDED_BY(mu_);
  std::unique_ptr<CpuLedger> ledger_ QRM_GUARDED_BY(mu_);
};

}  // namespace qrm::cpu
