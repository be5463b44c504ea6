// NicState: the NICs the plugin serves and which containers use them.
//
// Many containers share one NIC; what is accounted per NIC is bandwidth (Mb/s), never above
// the NIC's capacity (speed * bandwidth ratio) for anything Allocate adds. A plain value with
// no locking and no I/O; every mutator applies completely or changes nothing.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "machine/topology.h"
#include "plugins/nic/nic_config.h"

namespace qrm::nic {

// A NIC's identity: its name within its network namespace ("" = the plugin's own).
struct NicKey {
  std::string netns;
  std::string name;

  // "eth0" in the root namespace, "ns1/eth1" elsewhere (also the allowlist syntax).
  std::string ToString() const { return netns.empty() ? name : netns + "/" + name; }
  friend auto operator<=>(const NicKey&, const NicKey&) = default;
};

struct Nic {
  NicKey key;
  std::string netns_path;  // "" in the root namespace
  int numa_node = -1;      // -1: unknown (local to no node)
  int64_t speed_mbps = 0;
  bool up = false;
  std::string ipv4;  // first address of each family; "" when none
  std::string ipv6;
  int64_t capacity_mbps = 0;  // speed_mbps * bandwidth ratio
};

// The NICs to serve: discovery's list (physical only unless asked otherwise) filtered by the
// allowlist, sorted by key. Allowlist entries that match no NIC are appended to `warnings`
// (a link may be missing at boot; that should not stop the plugin).
std::vector<Nic> BuildInventory(const machine::MachineTopology& machine,
                                const NicPluginConfig& config, std::vector<std::string>* warnings);

// The NIC one container was given, and everything it was told about it, so that answers stay
// the same across restarts even if the NIC's addresses change or it disappears.
struct NicAssignment {
  NicKey nic;
  std::string netns_path;
  int numa_node = -1;
  int64_t bandwidth_mbps = 0;  // 0: no bandwidth requested
  std::string ipv4;
  std::string ipv6;
  bool hint_preferred = false;
};

struct PodNics {
  std::string name;
  std::string ns;
  std::map<std::string, NicAssignment> containers;  // by container name
};

class NicState {
 public:
  explicit NicState(std::vector<Nic> nics);

  const std::vector<Nic>& nics() const { return nics_; }
  const Nic* Find(const NicKey& key) const;  // nullptr when not served (or gone)
  int64_t AllocatedMbps(const NicKey& key) const;
  int64_t FreeMbps(const Nic& nic) const;  // 0 when over-allocated

  const std::map<std::string, PodNics>& pods() const { return pods_; }
  const PodNics* Pod(const std::string& uid) const;
  const NicAssignment* FindAssignment(const std::string& uid, const std::string& container) const;

  // Records an assignment. Errors, with nothing changed: kAlreadyExists (the container has
  // one), kNotFound (the NIC is not served), kResourceExhausted (its bandwidth does not fit,
  // naming NIC, request and free Mb/s).
  Status Add(const std::string& uid, const std::string& pod_name, const std::string& pod_ns,
             const std::string& container, NicAssignment assignment);
  // Restore only: records what the checkpoint says even for a NIC that is gone or now has
  // less capacity (the containers exist; the caller logs the discrepancy).
  void AddRecorded(const std::string& uid, const std::string& pod_name, const std::string& pod_ns,
                   const std::string& container, NicAssignment assignment);
  void RemoveContainer(const std::string& uid, const std::string& container);
  std::optional<PodNics> RemovePod(const std::string& uid);
  void RestorePod(const std::string& uid, PodNics pod);

 private:
  void Account(const NicAssignment& a, bool add);

  std::vector<Nic> nics_;
  std::map<NicKey, int64_t> allocated_mbps_;  // by NIC, including NICs that are gone
  std::map<std::string, PodNics> pods_;       // by pod UID
};

// What restored assignments say that the NICs served now contradict: a NIC no longer served,
// a NIC on another NUMA node, more bandwidth allocated than a NIC's capacity now. One line each,
// for the log (the assignments are kept: the containers exist).
std::vector<std::string> RecordDiscrepancies(const NicState& state);

}  // namespace qrm::nic
