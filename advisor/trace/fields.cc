#include "advisor/trace/fields.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include <fmt/format.h>

#include "advisor/trace/trace_reader.h"
#include "common/quote.h"

namespace qrm::advisor::trace_internal {

void SplitFields(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

Status FieldError(const Where& where, std::string_view field, std::string_view value,
                  std::string_view expected) {
  return InvalidArgumentError(fmt::format("{}:{}: {}: invalid value {} ({})", where.file,
                                          where.line, field, Quote(value), expected));
}

StatusOr<int64_t> ParseSeconds(const Where& where, std::string_view field, std::string_view value) {
  int64_t seconds = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, seconds);
  // Alibaba's schema types time_stamp as a double: a whole number written "386640.0" is
  // still a whole number of seconds.
  if (ec == std::errc() && ptr != end && *ptr == '.' && ptr + 1 != end &&
      std::all_of(ptr + 1, end, [](char c) { return c == '0'; })) {
    ptr = end;
  }
  // Bounded (2^40 s is 34,000 years) so that the replay's step and window arithmetic on
  // these times cannot overflow.
  if (value.empty() || ec != std::errc() || ptr != end || seconds < 0 ||
      seconds > kMaxTraceSeconds) {
    return FieldError(where, field, value, "a whole number of seconds, 0 to 2^40");
  }
  return seconds;
}

StatusOr<double> ParseAmount(const Where& where, std::string_view field, std::string_view value) {
  double amount = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, amount);
  if (value.empty() || ec != std::errc() || ptr != end || !std::isfinite(amount) || amount < 0) {
    return FieldError(where, field, value, "a number >= 0");
  }
  return amount + 0.0;  // "-0" is 0: no negative zero reaches a sink
}

const char* IdProblem(std::string_view id) {
  if (id.empty()) return "a non-empty id";
  for (const char c : id) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == ',' || c == '"' || byte < 0x20 || byte == 0x7f) {
      return "an id without commas, quotes or control characters";
    }
  }
  return nullptr;
}

Status CheckId(const Where& where, std::string_view field, std::string_view value) {
  if (const char* problem = IdProblem(value)) return FieldError(where, field, value, problem);
  return Status::Ok();
}

}  // namespace qrm::advisor::trace_internal
