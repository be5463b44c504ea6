// Rules for the envs and annotations resource plugins return: both end up in the container's
// CRI config (environ, OCI annotations), so a key the runtime would mangle or a value large
// enough to bloat every CRI message and checkpoint is refused before it goes anywhere.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::apply {

// Per value. Kubernetes caps all of an object's annotations at 256 KiB together; one plugin's
// single annotation or env var has no business coming close.
inline constexpr size_t kMaxEnvValueBytes = 32 * 1024;
inline constexpr size_t kMaxAnnotationValueBytes = 64 * 1024;

// Env name: Kubernetes' rule, [-._a-zA-Z][-._a-zA-Z0-9]* (so no '=', NUL or spaces, and no
// leading digit); value without NUL and at most kMaxEnvValueBytes. kInvalidArgument:
//   resource "<resource>": env key "<key>": <reason>
Status CheckEnvVar(std::string_view resource, const std::string& key, const std::string& value);

// Annotation key: a Kubernetes qualified name ([DNS-subdomain "/"] name of 1-63 characters
// [A-Za-z0-9._-], alphanumeric at both ends); value at most kMaxAnnotationValueBytes.
// kInvalidArgument:  resource "<resource>": annotation key "<key>": <reason>
Status CheckAnnotation(std::string_view resource, const std::string& key, const std::string& value);

}  // namespace qrm::apply
