#include "common/quote.h"

#include <algorithm>

#include <fmt/format.h>

namespace qrm {

namespace {
constexpr std::size_t kMaxQuotedChars = 128;
}  // namespace

std::string Quote(std::string_view text) {
  std::string out = "\"";
  const std::size_t shown = std::min(text.size(), kMaxQuotedChars);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  if (shown < text.size()) {
    out += fmt::format("...\" ({} bytes)", text.size());
  } else {
    out += '"';
  }
  return out;
}

}  // namespace qrm
