// RFC 6901 JSON Pointer tokens, for the paths of the JSON Patches qrm sends (a Node's status,
// a pod's annotations): "example.com/widget" -> "example.com~1widget".
#pragma once

#include <string>
#include <string_view>

namespace qrm::kube {

// One reference token: '~' becomes "~0" and '/' becomes "~1" (in that order, as RFC 6901 says).
std::string EscapeJsonPointer(std::string_view token);

}  // namespace qrm::kube
