// Query strings of API requests: selectors hold '=', ',' and '!', continue tokens and resource
// versions are opaque and may hold '=', '+' or '/'; each value is percent-encoded.
#pragma once

#include <string>
#include <string_view>

namespace qrm::kube {

// RFC 3986 percent-encoding of everything but the unreserved characters (A-Z a-z 0-9 - _ . ~).
std::string QueryEscaped(std::string_view value);

}  // namespace qrm::kube
