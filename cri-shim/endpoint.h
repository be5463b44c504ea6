// Endpoint: where a CRI socket lives, parsed from a flag value.
//
// The kubelet and crictl spell CRI endpoints either as a plain path
// ("/run/containerd/containerd.sock") or as a URL ("unix:///run/containerd/containerd.sock");
// both are accepted. Nothing else is a CRI endpoint on Linux (no TCP: the runtime's socket
// permissions are the only access control CRI has).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::shim {

struct Endpoint {
  std::string path;    // absolute filesystem path of the Unix socket
  std::string target;  // the same as a gRPC target: "unix:///path"
};

// "unix:///x" or "/x" -> {"/x", "unix:///x"}. Anything else (empty, relative path,
// "unix://relative", other schemes) is kInvalidArgument naming `flag` and the value.
StatusOr<Endpoint> ParseEndpoint(std::string_view flag, std::string_view value);

}  // namespace qrm::shim
