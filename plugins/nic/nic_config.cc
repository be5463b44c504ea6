#include "plugins/nic/nic_config.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::nic {

std::string NicPluginConfig::StatePath() const {
  return state_dir.empty() ? std::string() : state_dir + "/" + kStateFileName;
}

Status NicPluginConfig::Validate() const {
  if (resource_name.empty()) return InvalidArgumentError("resource-name: must not be empty");
  if (bandwidth_resource_name == resource_name) {
    return InvalidArgumentError(fmt::format(
        "bandwidth-resource-name {}: must differ from resource-name", Quote(resource_name)));
  }
  if (!std::isfinite(bandwidth_ratio) || bandwidth_ratio <= 0 || bandwidth_ratio > 100) {
    return InvalidArgumentError(fmt::format(
        "bandwidth-ratio {}: expected a number above 0 and at most 100", bandwidth_ratio));
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> ParseNicAllowlist(std::string_view text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view element = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    const auto slashes = std::count(element.begin(), element.end(), '/');
    if (element.empty() || slashes > 1 || element.front() == '/' || element.back() == '/') {
      return InvalidArgumentError(
          fmt::format("nic-allowlist: element {}: expected an interface name (\"eth0\") or "
                      "namespace/name (\"ns1/eth1\")",
                      Quote(element)));
    }
    out.emplace_back(element);
  }
  return out;
}

}  // namespace qrm::nic
