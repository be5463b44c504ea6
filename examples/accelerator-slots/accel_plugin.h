// AccelPlugin: the example's qrm::sdk::ResourcePlugin.
//
// It turns the protocol's requests into SlotPool calls, remembers which
// container holds which slots, and records that durably in the SDK's pod ledger
// (plugins/sdk/pod_ledger.h) before it answers, so that a restarted plugin knows
// exactly what it gave out.
//
// Everything the host can observe goes through the methods below; read them
// in this order to follow one container's life:
//   GetTopologyHints -> Allocate -> (GetResourcesAllocation, ...) -> RemovePod.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/numa_mask.h"
#include "examples/accelerator-slots/slot_pool.h"
#include "plugins/sdk/pod_ledger.h"
#include "plugins/sdk/resource_plugin.h"

namespace qrm::example {

inline constexpr const char* kDefaultResource = "example.qrm.io/accel-slots";
// Where the state lives by default: a directory of the plugin's own, never the plugin (socket)
// directory, which the host and other plugins share and which operators clean.
inline constexpr const char* kDefaultStateDir = "/var/lib/qrm/accel-slots";
inline constexpr const char* kStateFileName = "accel-slots.json";
// Version of the ledger's entries (accel_plugin.cc, StoredSlots). Version 1 was one file
// rewritten whole on every change; such a file is upgraded at start.
inline constexpr uint32_t kStateVersion = 2;

struct AccelConfig {
  std::string resource = kDefaultResource;
  NumaMask numa_nodes = NumaMask::FirstN(2);
  int slots_per_node = 4;
  // Where allocations are persisted. Empty keeps them in memory only, which is
  // only sensible in unit tests: a real plugin must survive its own restart.
  std::string state_path;
  // --reset-state: set aside a state file that holds slots the configuration no longer has
  // (and start empty) instead of refusing to start.
  bool reset_state = false;
  // --state-sync every-change: fdatasync each change before answering (sdk/pod_ledger.h).
  bool state_sync = false;
};

class AccelPlugin final : public sdk::ResourcePlugin {
 public:
  // Builds the pool and restores the allocations in config.state_path. Fails
  // (and the plugin should not start) if the state cannot be read or holds
  // allocations that do not fit the configured nodes and slots. A corrupt (or
  // unknown version of the) state is moved aside and the plugin starts empty,
  // logging an error: the host replays what running containers hold.
  static StatusOr<std::unique_ptr<AccelPlugin>> Create(AccelConfig config);

  std::string ResourceName() const override { return config_.resource; }
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

 private:
  // What one container holds, and the hint it was allocated with (reported
  // back in resource_hints, so the answer never changes after a restart).
  struct ContainerSlots {
    Grant grant;
    NumaMask hint;
    bool hint_preferred = false;
  };
  struct PodSlots {
    std::string name;
    std::string ns;
    std::map<std::string, ContainerSlots> containers;  // by container name
  };
  // One container's entry in the ledger: its slots and its pod's name.
  struct StoredSlots {
    std::string pod_name;
    std::string pod_namespace;
    ContainerSlots slots;

    void Encode(sdk::EntryWriter& w) const;
    static StatusOr<StoredSlots> Decode(const sdk::EntryReader& r);
  };
  using Ledger = sdk::PodLedger<StoredSlots>;

  AccelPlugin(AccelConfig config, SlotPool pool);

  // The whole number of slots `req` asks for; 0 when it does not mention our
  // resource. kInvalidArgument naming the value otherwise.
  StatusOr<int> RequestedSlots(const ::resourceplugin::v1alpha1::ResourceRequest& req) const;
  // What the container holds, or null. Called with mu_ held.
  const ContainerSlots* Find(const std::string& pod_uid, const std::string& container) const;
  // The NUMA nodes of req.hint(), or all of ours when it names none.
  StatusOr<NumaMask> HintNodes(const ::resourceplugin::v1alpha1::ResourceRequest& req) const;
  // `n` slots within `within`, or exactly the previous grant when the request is the host's
  // replay after a lost state (annotation qrm.io/previous-allocation). Called with mu_ held.
  StatusOr<Grant> TakeFor(const ::resourceplugin::v1alpha1::ResourceRequest& req, int n,
                          NumaMask within);
  ::resourceplugin::v1alpha1::ResourceAllocationInfo InfoFor(const ContainerSlots& slots) const;
  ::resourceplugin::v1alpha1::TopologyAwareResource TopologyAwareFor(const Grant& grant) const;

  // Opens the ledger and takes back what it records (Create, with mu_ held).
  Status Restore();
  // What a version 1 state file (one file rewritten whole) held.
  static StatusOr<Ledger::Contents> UpgradeVersion1(const rapidjson::Value& data, uint32_t);

  const AccelConfig config_;
  mutable std::mutex mu_;  // gRPC calls arrive on many threads at once
  SlotPool pool_;
  std::map<std::string, PodSlots> pods_;  // by pod UID
  std::unique_ptr<Ledger> ledger_;        // null without a state path (unit tests)
};

// Earlier versions of the example kept its state in <plugin-dir>/accel-slots.json by default.
// Moves `legacy` to `path` when `legacy` exists and `path` does not (creating path's
// directory), so that an upgrade keeps its allocations; otherwise does nothing (both existing:
// `path` wins and `legacy` is left alone, with a warning). Errors name both paths.
Status AdoptLegacyStateFile(const std::string& legacy, const std::string& path);

}  // namespace qrm::example
