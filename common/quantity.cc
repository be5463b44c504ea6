#include "common/quantity.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm {

// Sets the private fields; the helpers below work on the digit string and the exponent.
struct QuantityBuilder {
  static Quantity Make(bool negative, std::string digits, int64_t exponent, QuantityFormat format,
                       std::string text);
};

namespace {

// Upstream refuses an exponent that does not fit its int32 scale (kubernetes PR 141203).
constexpr int64_t kMinExponent = std::numeric_limits<int32_t>::min();
constexpr int64_t kMaxExponent = std::numeric_limits<int32_t>::max();
// The largest multiple of 3 that Parse accepts as an exponent (output keeps exponents % 3 == 0).
constexpr int64_t kMaxOutputExponent = kMaxExponent - kMaxExponent % 3;
constexpr std::string_view kMaxInt64Digits = "9223372036854775807";  // BinarySI's cap
constexpr std::string_view kSyntax = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// ---- Reading the text, as upstream's parseQuantityString scans it ----

struct Scanned {
  bool negative = false;
  bool has_digits = false;  // a digit before the suffix (upstream's big-decimal path needs one)
  std::string_view num;     // integer digits without leading zeros; "" stands for 0
  std::string_view denom;   // fraction digits as written
  std::string_view suffix;
};

size_t SkipDigits(std::string_view s, size_t pos) {
  while (pos < s.size() && IsDigit(s[pos])) ++pos;
  return pos;
}

// Sign, digits, '.', digits, suffix letters, an optional sign and digits; nullopt when
// anything else follows. The digits may all be missing ("Mi", "+", "." read as zero).
std::optional<Scanned> Scan(std::string_view s) {
  Scanned out;
  size_t pos = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) out.negative = s[pos++] == '-';
  const size_t zeros = pos;
  while (pos < s.size() && s[pos] == '0') ++pos;
  out.has_digits = pos > zeros || pos == s.size();  // upstream reads "-" alone as "0"
  size_t end = SkipDigits(s, pos);
  out.num = s.substr(pos, end - pos);
  pos = end;
  if (pos < s.size() && s[pos] == '.') {
    end = SkipDigits(s, pos + 1);
    out.denom = s.substr(pos + 1, end - pos - 1);
    pos = end;
  }
  out.has_digits = out.has_digits || !out.num.empty() || !out.denom.empty();
  const size_t suffix = pos;
  while (pos < s.size() &&
         std::string_view("eEinumkKMGTP").find(s[pos]) != std::string_view::npos) {
    ++pos;
  }
  if (pos < s.size() && (s[pos] == '-' || s[pos] == '+')) ++pos;
  if (SkipDigits(s, pos) != s.size()) return std::nullopt;
  out.suffix = s.substr(suffix);
  return out;
}

struct Suffix {
  bool binary = false;  // 2^exponent, else 10^exponent
  int64_t exponent = 0;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};

constexpr std::string_view kDecimalSuffixes[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
constexpr std::string_view kBinarySuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

// Go's strconv.ParseInt syntax: an optional sign and at least one decimal digit.
bool IsSignedInteger(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return !s.empty() && SkipDigits(s, 0) == s.size();
}

StatusOr<Suffix> Interpret(std::string_view s, std::string_view text) {
  for (int i = 0; i < 10; ++i) {
    if (s == kDecimalSuffixes[i]) return Suffix{false, 3 * i - 9, QuantityFormat::kDecimalSI};
  }
  for (int i = 1; i < 7; ++i) {
    if (s == kBinarySuffixes[i]) return Suffix{true, 10 * i, QuantityFormat::kBinarySI};
  }
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E') || !IsSignedInteger(s.substr(1))) {
    return InvalidArgumentError(
        fmt::format("quantity {}: unknown suffix {}", Quote(text), Quote(s)));
  }
  const std::string_view number = s.substr(s[1] == '+' ? 2 : 1);
  int64_t exponent = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), exponent);
  if (ec != std::errc() || exponent < kMinExponent || exponent > kMaxExponent) {
    return InvalidArgumentError(
        fmt::format("quantity {}: exponent {} is out of range", Quote(text), s.substr(1)));
  }
  return Suffix{false, exponent, QuantityFormat::kDecimalExponent};
}

// ---- Exact decimal arithmetic on digit strings ----

// Drops leading zeros and moves trailing zeros into the exponent; zero is "" with exponent 0.
void Normalize(std::string& digits, int64_t& exponent) {
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  const size_t last = digits.find_last_not_of('0');
  if (last == std::string::npos) {
    exponent = 0;
    return;
  }
  exponent += static_cast<int64_t>(digits.size() - last - 1);
  digits.resize(last + 1);
}

void MultiplySmall(std::string& digits, unsigned factor) {
  unsigned carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    const unsigned v = static_cast<unsigned>(*it - '0') * factor + carry;
    *it = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  for (; carry > 0; carry /= 10) digits.insert(digits.begin(), static_cast<char>('0' + carry % 10));
}

void Increment(std::string& digits) {
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (*it != '9') {
      ++*it;
      return;
    }
    *it = '0';
  }
  digits.insert(digits.begin(), '1');
}

// Upstream keeps whole nanos: anything finer rounds up, away from zero (0.1n is 1n), so that
// asking for a tiny amount never reads as asking for none. `digits` is normalized.
void RoundUpToNanos(std::string& digits, int64_t& exponent) {
  if (digits.empty() || exponent >= -9) return;
  const int64_t drop = -9 - exponent;
  exponent = -9;
  if (drop >= static_cast<int64_t>(digits.size())) {
    digits = "1";
    return;
  }
  digits.resize(digits.size() - static_cast<size_t>(drop));  // what is dropped is not zero
  Increment(digits);
  Normalize(digits, exponent);
}

// Compares two normalized, non-zero magnitudes.
int CompareMagnitude(std::string_view a, int64_t ea, std::string_view b, int64_t eb) {
  const int64_t order_a = static_cast<int64_t>(a.size()) + ea;
  const int64_t order_b = static_cast<int64_t>(b.size()) + eb;
  if (order_a != order_b) return order_a < order_b ? -1 : 1;
  const int c = a.compare(b);  // same order and no trailing zeros: text order is value order
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

std::string DigitsOf(uint64_t v) {
  return v == 0 ? std::string() : std::to_string(v);
}

uint64_t Magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

// The value of at most 19 digits.
uint64_t ToUint(std::string_view digits) {
  uint64_t v = 0;
  for (const char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

// ---- Parsing ----

// Whether upstream takes its int64 fast path, which keeps canonical-looking input text as the
// output text (see KeepsText); the arithmetic of both paths agrees.
struct FastPath {
  bool taken = false;
  std::string shifted;  // integer and fraction digits together
  int64_t scale = 0;
};

FastPath UpstreamFastPath(const Scanned& s, const Suffix& suffix) {
  FastPath fast;
  const int64_t num_len = std::max<int64_t>(1, static_cast<int64_t>(s.num.size()));
  const auto denom_len = static_cast<int64_t>(s.denom.size());
  if (suffix.binary) {
    // Upstream's estimate of the digits 2^exponent adds: exponent * 3 / 10.
    fast.taken = denom_len == 0 && 15 - num_len - suffix.exponent * 3 / 10 - 1 >= 0;
  } else {
    fast.scale = suffix.exponent - denom_len;
    fast.taken = 18 - (num_len + denom_len) >= 0 && fast.scale >= -9;
  }
  if (fast.taken) fast.shifted = std::string(s.num.empty() ? "0" : s.num) + std::string(s.denom);
  return fast;
}

// Upstream's String() returns the parsed text itself when its fast path judged the text
// canonical: a BinarySI number that is not a multiple of 8, or a decimal one whose scale is a
// multiple of 3 and whose digits neither start with 0 nor end in 000. The judgement ignores the
// sign and the spelling, so "+1", "01", "1.500k" and "1E3" come back as written.
bool KeepsText(const FastPath& fast, const Suffix& suffix) {
  if (!fast.taken) return false;
  if (suffix.binary) return (ToUint(fast.shifted) & 7) != 0;
  return fast.scale % 3 == 0 && !fast.shifted.ends_with("000") && fast.shifted[0] != '0';
}

StatusOr<Quantity> Build(std::string_view text, const Scanned& s, const Suffix& suffix) {
  const FastPath fast = UpstreamFastPath(s, suffix);
  if (!fast.taken && !s.has_digits) {
    return InvalidArgumentError(fmt::format("quantity {}: no digits", Quote(text)));
  }
  std::string digits = std::string(s.num) + std::string(s.denom);
  int64_t exponent = -static_cast<int64_t>(s.denom.size());
  if (suffix.binary) {
    for (int64_t i = 0; i < suffix.exponent / 10; ++i) MultiplySmall(digits, 1024);
  } else {
    exponent += suffix.exponent;
  }
  Normalize(digits, exponent);
  RoundUpToNanos(digits, exponent);
  QuantityFormat format = suffix.format;
  if (suffix.binary && !digits.empty()) {
    if (CompareMagnitude(digits, exponent, kMaxInt64Digits, 0) > 0) {
      digits = kMaxInt64Digits;
      exponent = 0;
    }
    // A binary amount below 1 would round to 0 or 1 in base 1024: upstream writes it decimal.
    if (static_cast<int64_t>(digits.size()) + exponent <= 0) format = QuantityFormat::kDecimalSI;
  }
  std::string kept = KeepsText(fast, suffix) ? std::string(text) : std::string();
  return QuantityBuilder::Make(s.negative, std::move(digits), exponent, format, std::move(kept));
}

// ---- Writing ----

std::optional<std::string_view> DecimalSISuffix(int64_t exponent) {
  if (exponent < -9 || exponent > 18 || exponent % 3 != 0) return std::nullopt;
  return kDecimalSuffixes[(exponent + 9) / 3];
}

// digits * 10^exponent with the exponent lowered to a multiple of 3, as large as that allows
// (and within what Parse accepts); an SI suffix when there is one, "e<exponent>" otherwise
// (upstream dropped the exponent past "E" until kubernetes PR 140459).
std::string DecimalText(std::string digits, int64_t exponent, QuantityFormat format) {
  const int64_t down = (exponent % 3 + 3) % 3;
  digits.append(static_cast<size_t>(down), '0');
  exponent -= down;
  if (exponent > kMaxOutputExponent) {
    digits.append(static_cast<size_t>(exponent - kMaxOutputExponent), '0');
    exponent = kMaxOutputExponent;
  }
  const std::optional<std::string_view> si = DecimalSISuffix(exponent);
  if (format == QuantityFormat::kDecimalSI && si) return digits + std::string(*si);
  return exponent == 0 ? digits : fmt::format("{}e{}", digits, exponent);
}

// A whole amount of at least 1024 as a multiple of the largest power of 1024 dividing it.
std::string BinaryText(uint64_t value) {
  int power = 0;
  while (value % 1024 == 0 && power < 6) {
    value /= 1024;
    ++power;
  }
  return std::to_string(value) + std::string(kBinarySuffixes[power]);
}

}  // namespace

Quantity QuantityBuilder::Make(bool negative, std::string digits, int64_t exponent,
                               QuantityFormat format, std::string text) {
  Quantity q;
  q.negative_ = negative && !digits.empty();
  q.digits_ = std::move(digits);
  q.exponent_ = q.digits_.empty() ? 0 : exponent;
  q.format_ = format;
  q.text_ = std::move(text);
  return q;
}

std::string_view QuantityFormatName(QuantityFormat format) {
  switch (format) {
    case QuantityFormat::kDecimalSI: return "DecimalSI";
    case QuantityFormat::kBinarySI: return "BinarySI";
    case QuantityFormat::kDecimalExponent: return "DecimalExponent";
  }
  return "?";
}

Quantity Quantity::FromMilli(int64_t milli, QuantityFormat f) {
  std::string digits = DigitsOf(Magnitude(milli));
  int64_t exponent = -3;
  Normalize(digits, exponent);
  return QuantityBuilder::Make(milli < 0, std::move(digits), exponent, f, "");
}

Quantity Quantity::FromInt(int64_t value, QuantityFormat f) {
  std::string digits = DigitsOf(Magnitude(value));
  int64_t exponent = 0;
  Normalize(digits, exponent);
  return QuantityBuilder::Make(value < 0, std::move(digits), exponent, f, "");
}

StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return InvalidArgumentError("quantity \"\": empty");
  if (text == "0") return QuantityBuilder::Make(false, "", 0, QuantityFormat::kDecimalSI, "0");
  const std::optional<Scanned> scanned = Scan(text);
  if (!scanned) {
    return InvalidArgumentError(fmt::format(
        "quantity {}: not a number with an optional suffix ({})", Quote(text), kSyntax));
  }
  StatusOr<Suffix> suffix = Interpret(scanned->suffix, text);
  if (!suffix.ok()) return suffix.status();
  return Build(text, *scanned, *suffix);
}

std::string Quantity::ToString() const {
  if (!text_.empty()) return text_;
  if (digits_.empty()) return "0";
  const std::string sign = negative_ ? "-" : "";
  if (format_ == QuantityFormat::kBinarySI) {
    // Below 1024 or with a fraction, base 1024 would hide or round the amount: decimal then.
    // Upstream divides by 1024 in int64 after taking the magnitude, which -2^63 has not: it is
    // written whole, as here.
    const bool whole = exponent_ >= 0 && static_cast<int64_t>(digits_.size()) + exponent_ <= 19;
    if (whole && CompareMagnitude(digits_, exponent_, "1024", 0) >= 0 &&
        CompareMagnitude(digits_, exponent_, kMaxInt64Digits, 0) <= 0) {
      return sign + BinaryText(ToUint(digits_ + std::string(static_cast<size_t>(exponent_), '0')));
    }
    return sign + DecimalText(digits_, exponent_, QuantityFormat::kDecimalSI);
  }
  return sign + DecimalText(digits_, exponent_, format_);
}

namespace {

// ceil(|digits * 10^exponent|), or nullopt when that has more than 19 digits (past int64).
std::optional<uint64_t> CeilMagnitude(const std::string& digits, int64_t exponent) {
  const int64_t whole = static_cast<int64_t>(digits.size()) + exponent;  // integer digits
  if (whole > 19) return std::nullopt;
  if (exponent >= 0) return ToUint(digits + std::string(static_cast<size_t>(exponent), '0'));
  // Normalized digits end in a non-zero digit, so a negative exponent means a fraction.
  const auto integer = whole > 0 ? std::string_view(digits).substr(0, static_cast<size_t>(whole))
                                 : std::string_view();
  return ToUint(integer) + 1;
}

int64_t Saturate(bool negative, std::optional<uint64_t> magnitude) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  if (!negative)
    return !magnitude || *magnitude > kMax ? std::numeric_limits<int64_t>::max()
                                           : static_cast<int64_t>(*magnitude);
  if (!magnitude || *magnitude > kMax + 1) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(uint64_t{0} - *magnitude);
}

}  // namespace

int64_t Quantity::MilliValue() const {
  if (digits_.empty()) return 0;
  return Saturate(negative_, CeilMagnitude(digits_, exponent_ + 3));
}

int64_t Quantity::Value() const {
  if (digits_.empty()) return 0;
  return Saturate(negative_, CeilMagnitude(digits_, exponent_));
}

double Quantity::AsDouble() const {
  if (digits_.empty()) return 0;
  const std::string text = fmt::format("{}e{}", digits_, exponent_);
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) {
    const bool huge = static_cast<int64_t>(digits_.size()) + exponent_ > 0;
    v = huge ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return negative_ ? -v : v;
}

StatusOr<double> ParseAmount(std::string_view what, std::string_view text) {
  auto fail = [&](std::string_view why) {
    return InvalidArgumentError(fmt::format(
        "{}={}: {} (expected a quantity such as 2, 1.5, 1500m, 512Mi)", what, Quote(text), why));
  };
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    return fail(text.front() == '-' ? "must not be negative" : "must not have a sign");
  }
  const size_t digits = text.find_first_of("0123456789");
  if (digits == std::string_view::npos || text.find_first_of("eE") < digits) {
    return fail("not a number");
  }
  StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) {
    // Parse names the text itself; the caller's `what` already does.
    std::string_view why = q.status().message();
    const std::string prefix = "quantity " + Quote(text) + ": ";
    if (why.starts_with(prefix)) why.remove_prefix(prefix.size());
    return fail(why);
  }
  const double amount = q->AsDouble();
  if (!std::isfinite(amount)) return fail("out of range");
  return amount;
}

}  // namespace qrm
