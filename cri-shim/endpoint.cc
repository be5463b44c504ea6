#include "cri-shim/endpoint.h"

#include <fmt/format.h>

namespace qrm::shim {

StatusOr<Endpoint> ParseEndpoint(std::string_view flag, std::string_view value) {
  constexpr std::string_view kScheme = "unix://";
  std::string_view path = value;
  if (path.rfind(kScheme, 0) == 0) {
    path.remove_prefix(kScheme.size());
  } else if (path.find("://") != std::string_view::npos) {
    return InvalidArgumentError(
        fmt::format("{} \"{}\": only unix:// endpoints are supported (e.g. unix:///run/containerd/"
                    "containerd.sock or /run/containerd/containerd.sock)",
                    flag, value));
  }
  if (path.empty() || path.front() != '/') {
    return InvalidArgumentError(fmt::format(
        "{} \"{}\": must be an absolute socket path, optionally prefixed by unix://", flag, value));
  }
  if (path.find('\0') != std::string_view::npos) {
    return InvalidArgumentError(fmt::format("{}: the path contains a NUL byte", flag));
  }
  Endpoint endpoint;
  endpoint.path = std::string(path);
  endpoint.target = std::string(kScheme) + endpoint.path;
  return endpoint;
}

}  // namespace qrm::shim
