#include "advisor/sample/counter_text.h"

#include <charconv>

#include <fmt/format.h>

namespace qrm::advisor {

StatusOr<uint64_t> ParseCounter(std::string_view text, std::string_view where) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return DataLossError(
        fmt::format("{}: invalid value \"{}\" (a counter)", where, text.substr(0, 64)));
  }
  return value;
}

}  // namespace qrm::advisor
