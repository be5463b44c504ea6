#include "plugins/cpu/exclusive_cpus.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "plugins/cpu/node_choice.h"

namespace qrm::cpu {
namespace {

class Accumulator {
 public:
  Accumulator(const CpuLayout& layout, CpuSet available, int count)
      : layout_(layout), available_(std::move(available)), remaining_(count) {}

  int remaining() const { return remaining_; }
  const CpuSet& result() const { return result_; }

  void Take(const CpuSet& cpus) {
    result_ = result_.Union(cpus);
    available_ = available_.Difference(cpus);
    remaining_ -= cpus.Size();
    for (int cpu : cpus) used_sockets_.insert(layout_.cores()[layout_.CoreOf(cpu)].socket);
  }

  // Step 1: whole groups (sockets or NUMA nodes) no larger than what is still needed.
  void TakeWholeGroups(const std::map<int, CpuSet>& groups) {
    for (const auto& [id, cpus] : groups) {
      if (remaining_ == 0) return;
      if (!cpus.Empty() && cpus.Size() <= remaining_ && cpus.IsSubsetOf(available_)) Take(cpus);
    }
  }

  // Step 2: whole cores (all threads online and free), one NUMA node at a time, while the
  // request still needs a whole core.
  void TakeWholeCores() {
    const int tpc = layout_.threads_per_core();
    while (remaining_ >= tpc) {
      // Free whole cores by node, ascending.
      std::map<int, std::vector<int>> by_node;
      std::map<int, int> whole_cpus;
      for (size_t i = 0; i < layout_.cores().size(); ++i) {
        const CoreInfo& core = layout_.cores()[i];
        if (layout_.IsWholeCore(core) && core.threads.IsSubsetOf(available_)) {
          by_node[core.node].push_back(static_cast<int>(i));
          whole_cpus[core.node] += tpc;
        }
      }
      if (by_node.empty()) return;
      const int node = PickNode(whole_cpus);
      for (int index : by_node[node]) {
        if (remaining_ < tpc) break;
        Take(layout_.cores()[index].threads);
      }
    }
  }

  // Step 3: single threads, filling partly used cores first and staying on the nodes, then
  // the sockets, already used.
  void TakeThreads() {
    if (remaining_ <= 0) return;
    const NumaMask used_nodes = layout_.NodesOf(result_);
    std::vector<std::tuple<bool, bool, int, int, int>> order;  // sort key, CPU id last
    for (int cpu : available_) {
      const CoreInfo& core = layout_.cores()[layout_.CoreOf(cpu)];
      order.emplace_back(!used_nodes.Has(core.node), !used_sockets_.contains(core.socket),
                         core.threads.Intersection(available_).Size(),
                         layout_.NodeCpus(core.node).Intersection(available_).Size(), cpu);
    }
    std::sort(order.begin(), order.end());
    CpuSet picked;
    for (int i = 0; i < remaining_ && i < static_cast<int>(order.size()); ++i) {
      picked.Add(std::get<4>(order[i]));
    }
    Take(picked);
  }

 private:
  // The node to take whole cores from next: the one with the fewest free CPUs among those
  // that can hold the rest of the request (whole cores for its whole-core part and free CPUs
  // for all of it, odd last thread included), else the one with the most free whole cores.
  int PickNode(const std::map<int, int>& whole_cpus) const {
    const int tpc = layout_.threads_per_core();
    const auto on_used_socket = [&](int node) {
      return used_sockets_.contains(layout_.SocketOfNode(node));
    };
    int best = -1;
    std::tuple<int, bool, int> best_key;
    for (const auto& [node, cpus] : whole_cpus) {
      const int free = layout_.NodeCpus(node).Intersection(available_).Size();
      if (cpus < remaining_ - remaining_ % tpc || free < remaining_) continue;
      std::tuple<int, bool, int> key{free, !on_used_socket(node), node};
      if (best < 0 || key < best_key) best = node, best_key = key;
    }
    if (best >= 0) return best;
    std::tuple<int, bool, int> spread_key;
    for (const auto& [node, cpus] : whole_cpus) {
      std::tuple<int, bool, int> key{-cpus, !on_used_socket(node), node};
      if (best < 0 || key < spread_key) best = node, spread_key = key;
    }
    return best;
  }

  const CpuLayout& layout_;
  CpuSet available_;
  int remaining_;
  CpuSet result_;
  std::set<int> used_sockets_;
};

int LargestGroup(const std::map<int, CpuSet>& groups) {
  int largest = 0;
  for (const auto& [id, cpus] : groups) largest = std::max(largest, cpus.Size());
  return largest;
}

}  // namespace

StatusOr<CpuSet> TakeExclusiveCpus(const CpuLayout& layout, const CpuSet& available, int count) {
  const CpuSet usable = available.Intersection(layout.online());
  if (count <= 0) return CpuSet();
  if (usable.Size() < count) {
    return ResourceExhaustedError(fmt::format("{} exclusive CPUs needed, {} available ({})", count,
                                              usable.Size(), usable.ToString()));
  }
  // Where first (as few nodes as can hold it), then which CPUs there.
  const CpuSet within = usable.Intersection(layout.MaskCpus(ChooseNodes(layout, usable, count)));
  Accumulator acc(layout, within, count);
  // Sockets before nodes when a socket holds several nodes, nodes first when a node spans
  // sockets; the second pass then picks up smaller whole groups.
  if (LargestGroup(layout.socket_cpus()) >= LargestGroup(layout.node_cpus())) {
    acc.TakeWholeGroups(layout.socket_cpus());
    acc.TakeWholeGroups(layout.node_cpus());
  } else {
    acc.TakeWholeGroups(layout.node_cpus());
    acc.TakeWholeGroups(layout.socket_cpus());
  }
  acc.TakeWholeCores();
  acc.TakeThreads();
  return acc.result();
}

}  // namespace qrm::cpu
