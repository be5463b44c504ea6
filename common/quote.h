// Quoting of untrusted text (plugin-supplied names, sysfs text) for error messages.
#pragma once

#include <string>
#include <string_view>

namespace qrm {

// "text" with quotes, backslashes and control/non-ASCII bytes escaped, so a message stays
// one unambiguous line whatever a plugin sent; values past 128 bytes are truncated with
// their length noted (a Unified JSON blob can be large).
std::string Quote(std::string_view text);

}  // namespace qrm
