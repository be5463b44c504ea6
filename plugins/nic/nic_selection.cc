#include "plugins/nic/nic_selection.h"

namespace qrm::nic {

std::vector<const Nic*> Candidates(const NicState& state, int64_t mbps) {
  std::vector<const Nic*> out;
  for (const Nic& nic : state.nics()) {
    if (nic.up && state.FreeMbps(nic) >= mbps) out.push_back(&nic);
  }
  return out;  // in key order, so ties break by name
}

std::optional<std::vector<NumaMask>> NicHints(const NicState& state, int64_t mbps) {
  const std::vector<const Nic*> candidates = Candidates(state, mbps);
  if (candidates.empty()) return std::vector<NumaMask>();
  NumaMask nodes;
  for (const Nic* nic : candidates) {
    if (nic->numa_node >= 0 && nic->numa_node < NumaMask::kMaxNodes) {
      nodes = nodes.With(nic->numa_node);
    }
  }
  if (nodes.empty()) return std::nullopt;
  std::vector<NumaMask> hints;
  for (int node : nodes.Nodes()) hints.push_back(NumaMask().With(node));
  return hints;
}

const Nic* PickNic(const NicState& state, NumaMask hint, int64_t mbps) {
  const std::vector<const Nic*> candidates = Candidates(state, mbps);
  const NumaMask within = hint.empty() ? NumaMask::FirstN(NumaMask::kMaxNodes) : hint;
  for (int node : within.Nodes()) {
    for (const Nic* nic : candidates) {
      if (nic->numa_node == node) return nic;
    }
  }
  for (const Nic* nic : candidates) {
    if (nic->numa_node < 0) return nic;
  }
  return nullptr;
}

}  // namespace qrm::nic
