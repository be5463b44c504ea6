// NicPlugin: the qrm::sdk::ResourcePlugin for NUMA-affine NICs (qrm-nic-plugin).
//
// A container wants a NIC when it requests the NIC resource (0 or 1), NIC bandwidth (Mb/s),
// or is NUMA-bound by its QoS (the design document's example 3: pods of a NUMA-bound role
// are told the NIC next to their node without asking). The host consults this plugin for
// every container (always_consult), so a container that wants nothing is answered from the
// request alone, without touching the shared state.
//
// Answers (nic_selection.h for the rules):
//   hints     one preferred hint per node with an up NIC that has the bandwidth free;
//             no preference when no such NIC has a known node, or nothing is wanted;
//             an empty list when nothing fits an explicit request (a NUMA-bound container
//             that asked for nothing gets no preference instead: it never fails for lack of
//             a NIC).
//   Allocate  the NIC on the hint's lowest node (ties by name); envs AFFINITY_NIC_NAME,
//             AFFINITY_NIC_ADDR_IPV4/IPV6 (first address of each family, when it has one),
//             annotation kubernetes.io/host-netns-path for a NIC in another namespace;
//             nothing written into cgroups (oci_property_name ""). Many containers share a
//             NIC; bandwidth is never oversubscribed.
// Every change is written durably (nic_ledger.h) before the RPC succeeds, and undone if the
// write fails.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "checkpoint/state_file.h"
#include "common/mutex.h"
#include "machine/topology.h"
#include "plugins/nic/nic_config.h"
#include "plugins/nic/nic_ledger.h"
#include "plugins/nic/nic_state.h"
#include "plugins/sdk/resource_plugin.h"

namespace qrm::nic {

class NicPlugin final : public sdk::ResourcePlugin {
 public:
  // Serves the NICs of `machine` (filtered by config.allowlist) and restores the ledger in
  // config.state_dir (nic_ledger.h; a fresh snapshot is written at once). Errors: an invalid
  // config (kInvalidArgument naming the option), I/O errors; a corrupt ledger is set aside. A
  // recorded NIC that is gone is not an error: it is logged, its containers keep their answers
  // (reported "(missing)" in allocation_result), and every other NIC is served.
  static StatusOr<std::unique_ptr<NicPlugin>> Create(NicPluginConfig config,
                                                     const machine::MachineTopology& machine);

  std::string ResourceName() const override { return config_.resource_name; }
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

  // A copy of the state, for tests and diagnostics.
  NicState Snapshot() const;

  // What Create found in the state file: restored, or set aside (corrupt) and why.
  const checkpoint::StateFileLoad& state_file() const { return state_file_; }

  // Writes a snapshot of the ledger (its per-node view is then current); sdk::Run calls it at
  // a clean stop.
  Status WriteSnapshot();
  Status OnStop() override { return WriteSnapshot(); }

 private:
  // What a container asks of us.
  struct Need {
    bool wanted = false;    // it gets a NIC if one fits
    bool required = false;  // it asked explicitly: no NIC is an error
    int64_t mbps = 0;
  };

  NicPlugin(NicPluginConfig config, NicState state, NumaMask machine_nodes);

  // kInvalidArgument naming the key and value for a bad quantity or QoS annotation.
  StatusOr<Need> NeedOf(const ::resourceplugin::v1alpha1::ResourceRequest& req) const;
  ::resourceplugin::v1alpha1::ResourceAllocationInfo AllocationInfo(const NicAssignment& a) const
      QRM_REQUIRES(mu_);

  const NicPluginConfig config_;
  const NumaMask machine_nodes_;
  // The NICs served and their capacities: fixed for the plugin's life, read without mu_.
  const std::vector<Nic> nics_;
  mutable Mutex mu_;
  NicState state_ QRM_GUARDED_BY(mu_);
  std::unique_ptr<NicLedger> ledger_ QRM_GUARDED_BY(mu_);  // what state_ holds, on disk
  checkpoint::StateFileLoad state_file_;
};

}  // namespace qrm::nic
