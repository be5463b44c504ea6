// SlotPool: the arithmetic of the example plugin, with no gRPC and no files.
//
// The example pretends every NUMA node has K "accelerator slots" and hands them
// out to containers. Keeping the pure allocation logic in a class of its own is
// the first thing we recommend to a plugin author: it is where the bugs are,
// and here it can be unit-tested in microseconds (tests/slot_pool_test.cc) without starting a host
// or a socket.
//
// The pool only counts free slots per node. Who holds which slots is the
// plugin's business (accel_plugin.h): the pool is told what to take, what to
// give back and, after a restart, what was already taken.
//
// Not thread-safe: the plugin serializes calls under its own mutex.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/numa_mask.h"
#include "common/status.h"

namespace qrm::example {

// Slots granted to one container, by NUMA node. Only nodes with at least one
// slot appear, so an empty grant holds nothing.
struct Grant {
  std::map<int, int> slots_by_node;

  int Total() const;
  // The nodes that actually hold slots (may be narrower than the hint).
  NumaMask Nodes() const;
  // "node0:2,node1:1": the allocation_result the plugin reports.
  std::string ToString() const;
  // The inverse of ToString. kInvalidArgument naming `text` when it is not that form (each
  // node once, slots >= 1).
  static StatusOr<Grant> Parse(const std::string& text);

  friend bool operator==(const Grant&, const Grant&) = default;
};

// One topology hint as the pool sees it; the plugin turns it into protobuf.
struct SlotHint {
  NumaMask nodes;
  bool preferred = false;

  friend bool operator==(const SlotHint&, const SlotHint&) = default;
};

class SlotPool {
 public:
  // Above this many nodes Hints() stops enumerating every subset (2^N of them).
  static constexpr int kMaxEnumeratedNodes = 8;

  // `nodes` must not be empty; `slots_per_node` must be in [1, 1'000'000].
  static StatusOr<SlotPool> Create(NumaMask nodes, int slots_per_node);

  NumaMask nodes() const { return nodes_; }
  int slots_per_node() const { return slots_per_node_; }
  int Capacity() const { return nodes_.Count() * slots_per_node_; }
  int Free() const { return FreeIn(nodes_); }
  // Free slots on `node` (0 for a node the pool does not have).
  int FreeOn(int node) const;
  // Free slots on the pool's nodes that are in `mask`; other nodes count as 0.
  int FreeIn(NumaMask mask) const;
  // "node0=4 node1=1", for error messages.
  std::string FreeSummary() const;

  // Topology hints for `n` slots, in NUMA mask order (narrowest first).
  //
  // Like the kubelet's device manager, every set of nodes whose free slots can
  // hold `n` is a hint, wider sets included: another resource may need two
  // nodes, and offering {0-1} lets the host's merge find an affinity both can
  // live with. The narrowest sets that fit are preferred, wider ones are not.
  // (The kubelet measures "narrowest" against an empty machine; we measure it
  // against the free slots, so a fragmented pool still yields a preferred hint.)
  //
  // Up to kMaxEnumeratedNodes nodes every subset is tried (at most 255). On
  // bigger machines only single nodes and the all-node set are offered; the
  // all-node set is then preferred only when no single node fits.
  //
  // Returns no hints when `n` does not fit at all (or `n` <= 0; the plugin
  // handles 0 before asking).
  std::vector<SlotHint> Hints(int n) const;

  // Takes `n` slots from the nodes in `within` (others are never touched),
  // filling the lowest-numbered node first. kResourceExhausted, naming `n`,
  // `within` and the free slots per node, when they do not fit; nothing is
  // taken then.
  StatusOr<Grant> Take(int n, NumaMask within);

  // Marks an existing grant as taken (restoring state after a restart). Fails
  // without taking anything if the grant names a node the pool does not have
  // (kInvalidArgument) or does not fit what is free (kResourceExhausted), e.g.
  // when the plugin restarts with fewer slots per node than before.
  Status Reserve(const Grant& grant);

  // Gives a grant's slots back. The grant must have come from Take or Reserve.
  void Release(const Grant& grant);

 private:
  SlotPool(NumaMask nodes, int slots_per_node);

  NumaMask nodes_;
  int slots_per_node_ = 0;
  std::map<int, int> free_;  // node -> free slots, one entry per node of nodes_
};

}  // namespace qrm::example
