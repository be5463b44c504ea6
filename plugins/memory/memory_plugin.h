// MemoryPlugin: the qrm::sdk::ResourcePlugin for "memory" (qrm-memory-plugin).
//
// What a container gets depends on its QoS (plugins/qos):
//   * NUMA-bound (numa_binding or numa_exclusive): NUMA hints from free memory per node
//     (memory_placement.h), its bytes accounted on the nodes of the host's merged hint, and
//     cpuset.mems = those nodes (oci_property_name "CpusetMems", allocation_result "0-1").
//   * anything else: no hint preference and nothing to write into the container; the bytes
//     are recorded (is_scalar_resource, allocated_quantity) outside any node.
// Requests are resource_requests["memory"] in bytes (fractions round up, as Kubernetes
// quantities do).
//
// Every change is written durably (memory_ledger.h) before the RPC succeeds; a failed
// write undoes the change in memory and fails the RPC. Thread-safe: one mutex guards the
// state, and no RPC of ours waits on anything but the disk.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "checkpoint/state_file.h"
#include "common/mutex.h"
#include "machine/topology.h"
#include "plugins/memory/memory_config.h"
#include "plugins/memory/memory_ledger.h"
#include "plugins/memory/memory_state.h"
#include "plugins/sdk/resource_plugin.h"

namespace qrm::memory {

class MemoryPlugin final : public sdk::ResourcePlugin {
 public:
  // Builds the per-node accounting from `machine` and `config` and restores the ledger in
  // config.state_dir (memory_ledger.h; a fresh snapshot is written at once, so the files
  // always exist and match this machine). Errors: a reservation for a node the machine lacks or
  // above a node's total (kInvalidArgument naming reserved-memory), a checkpoint that cannot be
  // restored (corrupt, other NUMA nodes, allocations that no longer fit: the message names the file
  // and says to start with --reset-state to discard it), I/O errors.
  static StatusOr<std::unique_ptr<MemoryPlugin>> Create(MemoryPluginConfig config,
                                                        const machine::MachineTopology& machine);

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

  // A copy of the accounting, for tests and diagnostics.
  MemoryState Snapshot() const;

  // What Create found in the state file: restored, or set aside (corrupt) and why.
  const checkpoint::StateFileLoad& state_file() const { return state_file_; }

  // Writes a snapshot of the ledger (its per-node view is then current); sdk::Run calls it at
  // a clean stop.
  Status WriteSnapshot();
  Status OnStop() override { return WriteSnapshot(); }

 private:
  MemoryPlugin(MemoryPluginConfig config, MemoryState state, uint64_t max_request_bytes);

  // The requested bytes (0 when the request names no memory); kInvalidArgument naming the
  // key and value for a negative, NaN or absurd quantity.
  StatusOr<uint64_t> RequestedBytes(const ::resourceplugin::v1alpha1::ResourceRequest& req) const;
  // The nodes a NUMA-bound container is placed on: the hint's, or without a hint our own
  // best one. Called with mu_ held.
  StatusOr<NumaMask> ChooseNodes(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                                 const ContainerMemory& memory, bool* preferred) const
      QRM_REQUIRES(mu_);

  const MemoryPluginConfig config_;
  // Above this a request is nonsense, not a big pod: the machine's memory times 1024.
  const uint64_t max_request_bytes_;
  // The NUMA nodes, totals and reservations: fixed for the plugin's life, read without mu_.
  const std::vector<NodeMemory> nodes_;
  mutable Mutex mu_;
  MemoryState state_ QRM_GUARDED_BY(mu_);
  std::unique_ptr<MemoryLedger> ledger_ QRM_GUARDED_BY(mu_);  // what state_ holds, on disk
  checkpoint::StateFileLoad state_file_;
};

// The ResourceAllocationInfo of one container, as Allocate and GetResourcesAllocation
// report it.
::resourceplugin::v1alpha1::ResourceAllocationInfo AllocationInfo(const ContainerMemory& memory);

}  // namespace qrm::memory
