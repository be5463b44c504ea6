#include "plugins/nic/nic_state.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace qrm::nic {
namespace {

bool Allowed(const machine::NicInfo& info, const std::vector<std::string>& allowlist,
             std::vector<bool>& matched) {
  if (allowlist.empty()) return true;
  const std::string qualified = info.netns.empty() ? info.name : info.netns + "/" + info.name;
  bool allowed = false;
  for (size_t i = 0; i < allowlist.size(); ++i) {
    if (allowlist[i] == info.name || allowlist[i] == qualified) {
      matched[i] = true;
      allowed = true;
    }
  }
  return allowed;
}

}  // namespace

std::vector<Nic> BuildInventory(const machine::MachineTopology& machine,
                                const NicPluginConfig& config, std::vector<std::string>* warnings) {
  std::vector<Nic> nics;
  std::vector<bool> matched(config.allowlist.size(), false);
  for (const machine::NicInfo& info : machine.nics) {
    if (!Allowed(info, config.allowlist, matched)) continue;
    Nic nic;
    nic.key = {info.netns, info.name};
    nic.netns_path = info.netns_path;
    nic.numa_node = info.numa_node;
    nic.speed_mbps = std::max<int64_t>(info.speed_mbps, 0);
    nic.up = info.operstate == "up";
    if (!info.ipv4.empty()) nic.ipv4 = info.ipv4.front();
    if (!info.ipv6.empty()) nic.ipv6 = info.ipv6.front();
    nic.capacity_mbps = static_cast<int64_t>(
        std::floor(static_cast<double>(nic.speed_mbps) * config.bandwidth_ratio));
    nics.push_back(std::move(nic));
  }
  for (size_t i = 0; i < matched.size(); ++i) {
    if (!matched[i] && warnings != nullptr) {
      warnings->push_back(
          fmt::format("nic-allowlist entry \"{}\" matches no discovered NIC", config.allowlist[i]));
    }
  }
  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) { return a.key < b.key; });
  return nics;
}

NicState::NicState(std::vector<Nic> nics) : nics_(std::move(nics)) {}

const Nic* NicState::Find(const NicKey& key) const {
  for (const Nic& nic : nics_) {
    if (nic.key == key) return &nic;
  }
  return nullptr;
}

int64_t NicState::AllocatedMbps(const NicKey& key) const {
  auto it = allocated_mbps_.find(key);
  return it == allocated_mbps_.end() ? 0 : it->second;
}

int64_t NicState::FreeMbps(const Nic& nic) const {
  return std::max<int64_t>(nic.capacity_mbps - AllocatedMbps(nic.key), 0);
}

const PodNics* NicState::Pod(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second;
}

const NicAssignment* NicState::FindAssignment(const std::string& uid,
                                              const std::string& container) const {
  const PodNics* pod = Pod(uid);
  if (pod == nullptr) return nullptr;
  auto it = pod->containers.find(container);
  return it == pod->containers.end() ? nullptr : &it->second;
}

Status NicState::Add(const std::string& uid, const std::string& pod_name, const std::string& pod_ns,
                     const std::string& container, NicAssignment assignment) {
  if (FindAssignment(uid, container) != nullptr) {
    return AlreadyExistsError(fmt::format("pod {} container {} already has a NIC", uid, container));
  }
  const Nic* nic = Find(assignment.nic);
  if (nic == nullptr) {
    return NotFoundError(fmt::format("NIC \"{}\" is not served", assignment.nic.ToString()));
  }
  if (assignment.bandwidth_mbps > FreeMbps(*nic)) {
    return ResourceExhaustedError(fmt::format("NIC \"{}\": {} Mb/s requested, {} Mb/s free",
                                              nic->key.ToString(), assignment.bandwidth_mbps,
                                              FreeMbps(*nic)));
  }
  AddRecorded(uid, pod_name, pod_ns, container, std::move(assignment));
  return Status::Ok();
}

void NicState::AddRecorded(const std::string& uid, const std::string& pod_name,
                           const std::string& pod_ns, const std::string& container,
                           NicAssignment assignment) {
  RemoveContainer(uid, container);  // a record is never counted twice
  Account(assignment, true);
  PodNics& pod = pods_[uid];
  pod.name = pod_name;
  pod.ns = pod_ns;
  pod.containers[container] = std::move(assignment);
}

void NicState::RemoveContainer(const std::string& uid, const std::string& container) {
  auto pod = pods_.find(uid);
  if (pod == pods_.end()) return;
  auto it = pod->second.containers.find(container);
  if (it == pod->second.containers.end()) return;
  Account(it->second, false);
  pod->second.containers.erase(it);
  if (pod->second.containers.empty()) pods_.erase(pod);
}

std::optional<PodNics> NicState::RemovePod(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return std::nullopt;
  PodNics removed = std::move(it->second);
  pods_.erase(it);
  for (const auto& [name, a] : removed.containers) Account(a, false);
  return removed;
}

void NicState::RestorePod(const std::string& uid, PodNics pod) {
  for (const auto& [name, a] : pod.containers) Account(a, true);
  pods_[uid] = std::move(pod);
}

void NicState::Account(const NicAssignment& a, bool add) {
  int64_t& mbps = allocated_mbps_[a.nic];
  mbps += add ? a.bandwidth_mbps : -a.bandwidth_mbps;
}

std::vector<std::string> RecordDiscrepancies(const NicState& state) {
  std::vector<std::string> lines;
  for (const auto& [uid, pod] : state.pods()) {
    for (const auto& [container, n] : pod.containers) {
      const Nic* nic = state.Find(n.nic);
      if (nic == nullptr) {
        lines.push_back(fmt::format(
            "pod {}/{} ({}) container {} holds NIC \"{}\", which is no longer served; its "
            "allocation is kept and reported as missing",
            pod.ns, pod.name, uid, container, n.nic.ToString()));
      } else if (nic->numa_node != n.numa_node) {
        lines.push_back(fmt::format(
            "NIC \"{}\" was on NUMA node {} for pod {}/{} ({}) container {}, it is on node {} now",
            n.nic.ToString(), n.numa_node, pod.ns, pod.name, uid, container, nic->numa_node));
      }
    }
  }
  for (const Nic& nic : state.nics()) {
    if (state.AllocatedMbps(nic.key) > nic.capacity_mbps) {
      lines.push_back(fmt::format(
          "NIC \"{}\": {} Mb/s are allocated, above its capacity of {} Mb/s now; nothing more "
          "is given out until enough is released",
          nic.key.ToString(), state.AllocatedMbps(nic.key), nic.capacity_mbps));
    }
  }
  return lines;
}

}  // namespace qrm::nic
