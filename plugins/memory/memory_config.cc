#include "plugins/memory/memory_config.h"

#include <charconv>

#include <fmt/format.h>

#include "common/config/config.h"
#include "common/numa_mask.h"
#include "common/quote.h"

namespace qrm::memory {
namespace {

constexpr std::string_view kKey = "reserved-memory";

StatusOr<int> ParseNodeId(std::string_view text, std::string_view element) {
  int node = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), node);
  if (ec != std::errc() || end != text.data() + text.size() || node < 0 ||
      node >= NumaMask::kMaxNodes) {
    return InvalidArgumentError(
        fmt::format("{}: element {}: NUMA node id {} is not a number from 0 to {}", kKey,
                    Quote(element), Quote(text), NumaMask::kMaxNodes - 1));
  }
  return node;
}

}  // namespace

uint64_t ReservedMemory::For(int node) const {
  auto it = per_node.find(node);
  return it == per_node.end() ? default_bytes : it->second;
}

StatusOr<ReservedMemory> ParseReservedMemory(std::string_view text) {
  ReservedMemory out;
  if (text.empty()) {
    return InvalidArgumentError(
        fmt::format("{}: empty value (expected e.g. \"500Mi\" or \"0=500Mi,1=1Gi\")", kKey));
  }
  bool default_seen = false;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view element = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;

    const size_t eq = element.find('=');
    const std::string_view size = eq == std::string_view::npos ? element : element.substr(eq + 1);
    StatusOr<uint64_t> bytes =
        config::ParseBytes(size, fmt::format("{} element {}", kKey, Quote(element)));
    if (!bytes.ok()) return bytes.status();
    if (eq == std::string_view::npos) {
      if (default_seen) {
        return InvalidArgumentError(fmt::format(
            "{}: element {}: a size for every node was already given", kKey, Quote(element)));
      }
      default_seen = true;
      out.default_bytes = *bytes;
      continue;
    }
    StatusOr<int> node = ParseNodeId(element.substr(0, eq), element);
    if (!node.ok()) return node.status();
    if (!out.per_node.emplace(*node, *bytes).second) {
      return InvalidArgumentError(
          fmt::format("{}: element {}: node {} is listed twice", kKey, Quote(element), *node));
    }
  }
  return out;
}

std::string MemoryPluginConfig::StatePath() const {
  return state_dir.empty() ? std::string() : state_dir + "/" + kStateFileName;
}

}  // namespace qrm::memory
