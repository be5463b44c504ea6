// Go's time.Duration text (meta_time.h).
#include <cstdlib>

#include <fmt/format.h>

#include "cluster/objects/meta_time.h"
#include "common/quote.h"

namespace qrm::cluster {
namespace {

constexpr uint64_t kMicro = 1000, kMilli = 1000 * kMicro, kSecond = 1000 * kMilli;
constexpr uint64_t kMinute = 60 * kSecond, kHour = 60 * kMinute;

// `v` / 10^digits with its fraction, trailing zeros trimmed: (1500, 3) -> "1.5".
std::string Fraction(uint64_t v, int digits) {
  uint64_t scale = 1;
  for (int i = 0; i < digits; ++i) scale *= 10;
  std::string text = std::to_string(v / scale);
  uint64_t frac = v % scale;
  if (frac == 0) return text;
  std::string tail = fmt::format("{:0{}}", frac, digits);
  while (tail.back() == '0') tail.pop_back();
  return text + "." + tail;
}

struct Unit {
  std::string_view name;
  uint64_t nanos;
};
constexpr Unit kUnits[] = {
    {"ns", 1},      {"us", kMicro}, {"\xC2\xB5s", kMicro}, {"\xCE\xBCs", kMicro},
    {"ms", kMilli}, {"s", kSecond}, {"m", kMinute},        {"h", kHour}};

Status BadDuration(std::string_view text, std::string_view why) {
  return InvalidArgumentError(
      fmt::format("duration {}: {} (want Go's form, e.g. 300s, 5m0s, 1h30m)", Quote(text), why));
}

// One "<number>[.<fraction>]<unit>" from `rest`, in nanoseconds, added to `total`.
Status TakeTerm(std::string_view text, std::string_view& rest, unsigned __int128& total) {
  unsigned __int128 whole = 0, frac = 0, scale = 1;
  size_t i = 0, digits = 0;
  for (; i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; ++i, ++digits) {
    whole = whole * 10 + static_cast<unsigned>(rest[i] - '0');
    if (whole > (static_cast<unsigned __int128>(1) << 64)) return BadDuration(text, "overflow");
  }
  if (i < rest.size() && rest[i] == '.') {
    for (++i; i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; ++i, ++digits) {
      if (scale < static_cast<unsigned __int128>(1e18)) {  // digits beyond nanos carry nothing
        frac = frac * 10 + static_cast<unsigned>(rest[i] - '0');
        scale *= 10;
      }
    }
  }
  if (digits == 0) return BadDuration(text, "a number is missing");
  rest.remove_prefix(i);
  for (const Unit& unit : kUnits) {
    if (rest.starts_with(unit.name)) {  // kUnits has "ms" before "m" and "s"
      rest.remove_prefix(unit.name.size());
      total += whole * unit.nanos + frac * unit.nanos / scale;
      if (total > (static_cast<unsigned __int128>(1) << 63)) return BadDuration(text, "overflow");
      return Status::Ok();
    }
  }
  return BadDuration(text, rest.empty() ? "a unit is missing" : "an unknown unit");
}

}  // namespace

std::string FormatDuration(int64_t nanoseconds) {
  const bool negative = nanoseconds < 0;
  const uint64_t u =
      negative ? 0 - static_cast<uint64_t>(nanoseconds) : static_cast<uint64_t>(nanoseconds);
  const std::string sign = negative ? "-" : "";
  if (u == 0) return "0s";
  if (u < kMicro) return fmt::format("{}{}ns", sign, u);
  if (u < kMilli) return sign + Fraction(u, 3) + "\xC2\xB5s";
  if (u < kSecond) return sign + Fraction(u, 6) + "ms";
  std::string out = sign;
  if (u >= kHour) out += fmt::format("{}h", u / kHour);
  if (u >= kMinute) out += fmt::format("{}m", (u / kMinute) % 60);
  return out + Fraction(u % kMinute, 9) + "s";
}

StatusOr<int64_t> ParseDuration(std::string_view text) {
  std::string_view rest = text;
  bool negative = false;
  if (!rest.empty() && (rest[0] == '-' || rest[0] == '+')) {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  if (rest == "0") return int64_t{0};
  if (rest.empty()) return BadDuration(text, "empty");
  unsigned __int128 total = 0;
  while (!rest.empty()) QRM_RETURN_IF_ERROR(TakeTerm(text, rest, total));
  const auto limit = static_cast<unsigned __int128>(1) << 63;
  if (!negative && total == limit) return BadDuration(text, "overflow");
  return negative ? static_cast<int64_t>(0 - static_cast<uint64_t>(total))
                  : static_cast<int64_t>(total);
}

}  // namespace qrm::cluster
