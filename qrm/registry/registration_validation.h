// Checks a plugin's registration before the host dials back to it.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::registry {

inline constexpr std::string_view kSupportedVersion = "v1alpha1";

// A resource name Kubernetes accepts in a container's requests: optional DNS-subdomain prefix
// and "/", then a name of 1-63 characters [A-Za-z0-9._-] starting and ending alphanumeric;
// without a prefix only cpu, memory, ephemeral-storage and hugepages-<size>; an extended
// (prefixed, non-kubernetes.io) name must not start with "requests.".
Status ValidateResourceName(std::string_view name);

Status ValidateVersion(std::string_view version);

// `endpoint` must be a plain file name (no '/', not "." or "..") of a Unix
// socket inside `plugin_dir`; a symlink is accepted only if it resolves to a
// socket inside the directory. Returns the socket's path on success.
StatusOr<std::string> ResolveEndpoint(const std::string& plugin_dir, std::string_view endpoint);

}  // namespace qrm::registry
