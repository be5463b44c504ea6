#include "examples/accelerator-slots/slot_pool.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace qrm::example {

int Grant::Total() const {
  int total = 0;
  for (const auto& [node, slots] : slots_by_node) total += slots;
  return total;
}

NumaMask Grant::Nodes() const {
  NumaMask mask;
  for (const auto& [node, slots] : slots_by_node) {
    if (slots > 0) mask = mask.With(node);
  }
  return mask;
}

namespace {

// A whole number in `text` and nothing else (no sign but '-', no spaces, no overflow).
bool WholeNumber(std::string_view text, int& out) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, out);
  return !text.empty() && error == std::errc() && stop == end;
}

// "node<N>:<slots>" with N >= 0 and slots >= 1, or nullopt.
std::optional<std::pair<int, int>> ParseElement(std::string_view element) {
  constexpr std::string_view kPrefix = "node";
  if (!element.starts_with(kPrefix)) return std::nullopt;
  element.remove_prefix(kPrefix.size());
  const size_t colon = element.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  int node = -1;
  int slots = 0;
  if (!WholeNumber(element.substr(0, colon), node) || node < 0 ||
      !WholeNumber(element.substr(colon + 1), slots) || slots < 1) {
    return std::nullopt;
  }
  return std::make_pair(node, slots);
}

}  // namespace

std::string Grant::ToString() const {
  std::string out;
  for (const auto& [node, slots] : slots_by_node) {
    out += fmt::format("{}node{}:{}", out.empty() ? "" : ",", node, slots);
  }
  return out;
}

StatusOr<Grant> Grant::Parse(const std::string& text) {
  const auto bad = [&text](const std::string& why) {
    return InvalidArgumentError(
        fmt::format("grant \"{}\": {} (expected the form \"node0:2,node1:1\")", text, why));
  };
  Grant grant;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view element = std::string_view(text).substr(pos, comma - pos);
    const std::optional<std::pair<int, int>> parsed = ParseElement(element);
    if (!parsed) return bad(fmt::format("element \"{}\" is not node<N>:<slots>", element));
    if (!grant.slots_by_node.emplace(parsed->first, parsed->second).second) {
      return bad(fmt::format("node {} appears twice", parsed->first));
    }
    pos = comma + 1;
  }
  // What we wrote has no leading zeros and lists the nodes in order.
  if (grant.ToString() != text) return bad("not in the form ToString writes");
  return grant;
}

StatusOr<SlotPool> SlotPool::Create(NumaMask nodes, int slots_per_node) {
  if (nodes.empty()) return InvalidArgumentError("NUMA node list is empty: need at least one node");
  // The bound keeps Capacity() far from int overflow even with 64 nodes.
  if (slots_per_node < 1 || slots_per_node > 1'000'000) {
    return InvalidArgumentError(
        fmt::format("slots per node {}: must be between 1 and 1000000", slots_per_node));
  }
  return SlotPool(nodes, slots_per_node);
}

SlotPool::SlotPool(NumaMask nodes, int slots_per_node)
    : nodes_(nodes), slots_per_node_(slots_per_node) {
  for (int node : nodes_.Nodes()) free_[node] = slots_per_node_;
}

int SlotPool::FreeOn(int node) const {
  auto it = free_.find(node);
  return it == free_.end() ? 0 : it->second;
}

int SlotPool::FreeIn(NumaMask mask) const {
  int total = 0;
  for (const auto& [node, slots] : free_) {
    if (mask.Has(node)) total += slots;
  }
  return total;
}

std::string SlotPool::FreeSummary() const {
  std::string out;
  for (const auto& [node, slots] : free_) {
    out += fmt::format("{}node{}={}", out.empty() ? "" : " ", node, slots);
  }
  return out;
}

std::vector<SlotHint> SlotPool::Hints(int n) const {
  if (n <= 0 || n > Free()) return {};

  // Candidate node sets: every non-empty subset on small machines; single
  // nodes plus all nodes on big ones (2^64 subsets is not an option, and the
  // kubelet's own managers are also limited to 8 NUMA nodes).
  const std::vector<int> ids = nodes_.Nodes();
  std::vector<NumaMask> candidates;
  if (ids.size() <= static_cast<size_t>(kMaxEnumeratedNodes)) {
    for (uint32_t bits = 1; bits < (uint32_t{1} << ids.size()); ++bits) {
      NumaMask mask;
      for (size_t i = 0; i < ids.size(); ++i) {
        if ((bits >> i) & 1U) mask = mask.With(ids[i]);
      }
      candidates.push_back(mask);
    }
  } else {
    for (int id : ids) candidates.push_back(NumaMask().With(id));
    candidates.push_back(nodes_);
  }

  // Keep the sets whose free slots hold n; the narrowest of them are preferred.
  std::vector<SlotHint> hints;
  int narrowest = INT_MAX;
  for (NumaMask mask : candidates) {
    if (FreeIn(mask) < n) continue;
    hints.push_back({mask, false});
    narrowest = std::min(narrowest, mask.Count());
  }
  for (SlotHint& hint : hints) hint.preferred = hint.nodes.Count() == narrowest;
  // A stable order makes responses (and tests) reproducible.
  std::sort(hints.begin(), hints.end(),
            [](const SlotHint& a, const SlotHint& b) { return a.nodes.IsNarrowerThan(b.nodes); });
  return hints;
}

StatusOr<Grant> SlotPool::Take(int n, NumaMask within) {
  const NumaMask usable = within.And(nodes_);
  if (n < 0 || FreeIn(usable) < n) {
    return ResourceExhaustedError(
        fmt::format("{} slot(s) do not fit on NUMA node(s) \"{}\" (free: {})", n, within.ToString(),
                    FreeSummary()));
  }
  // Lowest node first: it packs small requests onto one node and leaves the
  // higher nodes whole for the next big request.
  Grant grant;
  int remaining = n;
  for (int node : usable.Nodes()) {
    if (remaining == 0) break;
    const int take = std::min(remaining, free_[node]);
    if (take == 0) continue;
    free_[node] -= take;
    grant.slots_by_node[node] = take;
    remaining -= take;
  }
  return grant;
}

Status SlotPool::Reserve(const Grant& grant) {
  // Check everything first so that a failure takes nothing.
  for (const auto& [node, slots] : grant.slots_by_node) {
    if (!nodes_.Has(node)) {
      return InvalidArgumentError(
          fmt::format("grant \"{}\": NUMA node {} is not one of this pool's nodes \"{}\"",
                      grant.ToString(), node, nodes_.ToString()));
    }
    if (slots < 1) {
      return InvalidArgumentError(fmt::format(
          "grant \"{}\": {} slot(s) on node {}: must be positive", grant.ToString(), slots, node));
    }
    if (slots > free_[node]) {
      return ResourceExhaustedError(
          fmt::format("grant \"{}\": {} slot(s) on node {} do not fit (free: {})", grant.ToString(),
                      slots, node, FreeSummary()));
    }
  }
  for (const auto& [node, slots] : grant.slots_by_node) free_[node] -= slots;
  return Status::Ok();
}

void SlotPool::Release(const Grant& grant) {
  for (const auto& [node, slots] : grant.slots_by_node) {
    auto it = free_.find(node);
    if (it != free_.end()) it->second = std::min(slots_per_node_, it->second + slots);
  }
}

}  // namespace qrm::example
