#include "plugins/cpu/node_choice.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "plugins/cpu/node_sets.h"

namespace qrm::cpu {
namespace {

// What one node offers: its free CPUs and how many of its cores are wholly free.
struct NodeOffer {
  int free = 0;
  int whole_cores = 0;
  int socket = 0;
};

struct Offers {
  std::map<int, NodeOffer> by_node;  // nodes with free CPUs only
  std::vector<int> nodes;            // their ids, ascending
  int whole_cores = 0;               // over all nodes
};

Offers CountOffers(const CpuLayout& layout, const CpuSet& available) {
  Offers offers;
  for (const CoreInfo& core : layout.cores()) {
    if (layout.IsWholeCore(core) && core.threads.IsSubsetOf(available)) {
      ++offers.by_node[core.node].whole_cores;
      ++offers.whole_cores;
    }
  }
  for (const auto& [node, cpus] : layout.node_cpus()) {
    const int free = cpus.Intersection(available).Size();
    if (free == 0) {
      offers.by_node.erase(node);
      continue;
    }
    NodeOffer& offer = offers.by_node[node];
    offer.free = free;
    offer.socket = layout.SocketOfNode(node);
    offers.nodes.push_back(node);
  }
  return offers;
}

// Whether `width` nodes could hold the request at all: the `width` largest offers.
bool WidthCanHold(const Offers& offers, int width, int count) {
  std::vector<int> free;
  for (const auto& [node, offer] : offers.by_node) free.push_back(offer.free);
  std::sort(free.rbegin(), free.rend());
  int sum = 0;
  for (int i = 0; i < width && i < static_cast<int>(free.size()); ++i) sum += free[i];
  return sum >= count;
}

}  // namespace

NumaMask ChooseNodes(const CpuLayout& layout, const CpuSet& available, int count) {
  const Offers offers = CountOffers(layout, available);
  // Whole cores, as many as the request can use, after the node and socket counts.
  const int cores = std::min(count / layout.threads_per_core(), offers.whole_cores);
  NumaMask all;
  for (int node : offers.nodes) all = all.With(node);

  int budget = kMaxCandidateNodeSets;
  for (int width = 1; width <= static_cast<int>(offers.nodes.size()); ++width) {
    if (!WidthCanHold(offers, width, count)) continue;
    NumaMask best;
    std::tuple<int, int, int> best_key;  // sockets, whole cores missing, free CPUs
    const bool complete = ForEachNodeSet(offers.nodes, width, &budget, [&](NumaMask mask) {
      int free = 0, whole = 0;
      std::set<int> sockets;
      for (int node : mask.Nodes()) {
        const NodeOffer& offer = offers.by_node.at(node);
        free += offer.free;
        whole += offer.whole_cores;
        sockets.insert(offer.socket);
      }
      if (free < count) return true;
      const std::tuple<int, int, int> key{static_cast<int>(sockets.size()),
                                          std::max(0, cores - whole), free};
      if (best.empty() || key < best_key) best = mask, best_key = key;
      return true;
    });
    if (!best.empty()) return best;
    if (!complete) break;
  }
  return all;
}

}  // namespace qrm::cpu
