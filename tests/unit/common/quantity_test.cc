// resource.Quantity against upstream's own examples: each table below is written from the test
// function of k8s.io/apimachinery pkg/api/resource/quantity_test.go named in its comment, with
// upstream's expected values and strings. The canonical forms and the rejected inputs were
// also checked against upstream's code run on the same inputs.
#include "common/quantity.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

namespace qrm {
namespace {

using Catch::Matchers::Contains;
using F = QuantityFormat;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Quantity MustParse(const std::string& text) {
  StatusOr<Quantity> q = Quantity::Parse(text);
  INFO(text);
  REQUIRE(q.ok());
  return *q;
}

// mantissa * 10^exponent: upstream's decQuantity(mantissa, exponent, _) without its format.
Quantity Amount(int64_t mantissa, int exponent) {
  return MustParse(fmt::format("{}e{}", mantissa, exponent));
}

std::string Refusal(const std::string& text) {
  StatusOr<Quantity> q = Quantity::Parse(text);
  INFO(text);
  REQUIRE_FALSE(q.ok());
  CHECK(q.status().code() == StatusCode::kInvalidArgument);
  return q.status().message();
}

struct ParseCase {
  const char* input;
  int64_t mantissa;
  int exponent;
  QuantityFormat format;
};

// TestQuantityParse: the amount and the format each input reads as.
const std::vector<ParseCase> kParseCases = {
    {"0", 0, 0, F::kDecimalSI},
    {"0n", 0, 0, F::kDecimalSI},
    {"0u", 0, 0, F::kDecimalSI},
    {"0m", 0, 0, F::kDecimalSI},
    {"0Ki", 0, 0, F::kBinarySI},
    {"0k", 0, 0, F::kDecimalSI},
    {"0Mi", 0, 0, F::kBinarySI},
    {"0M", 0, 0, F::kDecimalSI},
    {"0Gi", 0, 0, F::kBinarySI},
    {"0G", 0, 0, F::kDecimalSI},
    {"0Ti", 0, 0, F::kBinarySI},
    {"0T", 0, 0, F::kDecimalSI},
    // Quantity less numbers are allowed
    {"1", 1, 0, F::kDecimalSI},
    // Binary suffixes
    {"1Ki", 1024, 0, F::kBinarySI},
    {"8Ki", 8 * 1024, 0, F::kBinarySI},
    {"7Mi", 7 * 1024 * 1024, 0, F::kBinarySI},
    {"6Gi", 6LL << 30, 0, F::kBinarySI},
    {"5Ti", 5LL << 40, 0, F::kBinarySI},
    {"4Pi", 4LL << 50, 0, F::kBinarySI},
    {"3Ei", 3LL << 60, 0, F::kBinarySI},
    {"10Ti", 10LL << 40, 0, F::kBinarySI},
    {"100Ti", 100LL << 40, 0, F::kBinarySI},
    // Decimal suffixes
    {"5n", 5, -9, F::kDecimalSI},
    {"4u", 4, -6, F::kDecimalSI},
    {"3m", 3, -3, F::kDecimalSI},
    {"9", 9, 0, F::kDecimalSI},
    {"8k", 8, 3, F::kDecimalSI},
    {"50k", 5, 4, F::kDecimalSI},
    {"7M", 7, 6, F::kDecimalSI},
    {"6G", 6, 9, F::kDecimalSI},
    {"5T", 5, 12, F::kDecimalSI},
    {"40T", 4, 13, F::kDecimalSI},
    {"300T", 3, 14, F::kDecimalSI},
    {"2P", 2, 15, F::kDecimalSI},
    {"1E", 1, 18, F::kDecimalSI},
    // Decimal exponents
    {"1E-3", 1, -3, F::kDecimalExponent},
    {"1e3", 1, 3, F::kDecimalExponent},
    {"1E6", 1, 6, F::kDecimalExponent},
    {"1e9", 1, 9, F::kDecimalExponent},
    {"1E12", 1, 12, F::kDecimalExponent},
    {"1e15", 1, 15, F::kDecimalExponent},
    {"1E18", 1, 18, F::kDecimalExponent},
    // Nonstandard but still parsable
    {"1e14", 1, 14, F::kDecimalExponent},
    {"1e13", 1, 13, F::kDecimalExponent},
    {"100.035k", 100035, 0, F::kDecimalSI},
    // Things that look like floating point
    {"0.001", 1, -3, F::kDecimalSI},
    {"0.0005k", 5, -1, F::kDecimalSI},
    {"0.005", 5, -3, F::kDecimalSI},
    {"0.05", 5, -2, F::kDecimalSI},
    {"0.5", 5, -1, F::kDecimalSI},
    {"0.00050k", 5, -1, F::kDecimalSI},
    {"0.00500", 5, -3, F::kDecimalSI},
    {"0.05000", 5, -2, F::kDecimalSI},
    {"0.50000", 5, -1, F::kDecimalSI},
    {"0.5e0", 5, -1, F::kDecimalExponent},
    {"0.5e-1", 5, -2, F::kDecimalExponent},
    {"0.5e-2", 5, -3, F::kDecimalExponent},
    {"10.035M", 10035, 3, F::kDecimalSI},
    {"1.2e3", 12, 2, F::kDecimalExponent},
    {"1.3E+6", 13, 5, F::kDecimalExponent},
    {"1.40e9", 14, 8, F::kDecimalExponent},
    {"1.53E12", 153, 10, F::kDecimalExponent},
    {"1.6e15", 16, 14, F::kDecimalExponent},
    {"1.7E18", 17, 17, F::kDecimalExponent},
    {"9.01", 901, -2, F::kDecimalSI},
    {"8.1k", 81, 2, F::kDecimalSI},
    {"7.123456M", 7123456, 0, F::kDecimalSI},
    {"6.987654321G", 6987654321, 0, F::kDecimalSI},
    {"5.444T", 5444, 9, F::kDecimalSI},
    {"40.1T", 401, 11, F::kDecimalSI},
    {"300.2T", 3002, 11, F::kDecimalSI},
    {"2.5P", 25, 14, F::kDecimalSI},
    {"1.01E", 101, 16, F::kDecimalSI},
    // Things that saturate/round
    {"3.001n", 4, -9, F::kDecimalSI},
    {"1.1E-9", 2, -9, F::kDecimalExponent},
    {"0.0000000001", 1, -9, F::kDecimalSI},
    {"0.0000000005", 1, -9, F::kDecimalSI},
    {"0.00000000050", 1, -9, F::kDecimalSI},
    {"0.5e-9", 1, -9, F::kDecimalExponent},
    {"0.9n", 1, -9, F::kDecimalSI},
    {"0.00000012345", 124, -9, F::kDecimalSI},
    {"0.00000012354", 124, -9, F::kDecimalSI},
    {"9Ei", kMax, 0, F::kBinarySI},
    {"9223372036854775807Ki", kMax, 0, F::kBinarySI},
    {"12E", 12, 18, F::kDecimalSI},
    // We'll accept fractional binary stuff, too.
    {"100.035Ki", 10243584, -2, F::kBinarySI},
    {"0.5Mi", 512 * 1024, 0, F::kBinarySI},
    {"0.05Gi", 536870912, -1, F::kBinarySI},
    {"0.025Ti", 274877906944, -1, F::kBinarySI},
    // Things written by trolls
    {"0.000000000001Ki", 2, -9, F::kDecimalSI},  // rounds up, changes format
    {".001", 1, -3, F::kDecimalSI},
    {".0001k", 100, -3, F::kDecimalSI},
    {"1.", 1, 0, F::kDecimalSI},
    {"1.G", 1, 9, F::kDecimalSI},
};

TEST_CASE("quantity parses upstream's TestQuantityParse table") {
  for (const ParseCase& c : kParseCases) {
    INFO(c.input);
    const Quantity q = MustParse(c.input);
    CHECK(q == Amount(c.mantissa, c.exponent));
    CHECK(QuantityFormatName(q.format()) == QuantityFormatName(c.format));
  }
}

TEST_CASE("quantity parses the table with a minus sign to the negative amount") {
  for (const ParseCase& c : kParseCases) {
    INFO(c.input);
    const Quantity q = MustParse(std::string("-") + c.input);
    CHECK(q == Amount(-c.mantissa, c.exponent));
    CHECK(QuantityFormatName(q.format()) == QuantityFormatName(c.format));
  }
}

TEST_CASE("quantity parses the table with a plus sign to the same amount") {
  for (const ParseCase& c : kParseCases) {
    INFO(c.input);
    const Quantity q = MustParse(std::string("+") + c.input);
    CHECK(q == Amount(c.mantissa, c.exponent));
    CHECK(QuantityFormatName(q.format()) == QuantityFormatName(c.format));
  }
}

TEST_CASE("quantity refuses upstream's invalid inputs and names the text") {
  // TestQuantityParse's invalid list (trailing whitespace is forbidden), then ours.
  for (const char* text : {"1.1.M",  "1+1.0M",  "0.1mi", "0.1am", "aoeu",  ".5i",  "1i",
                           "-3.01i", "-3.01e-", " 1",    "1 ",    "1.2.3", "1 Mi", "12x",
                           "1e",     "1eKi",    "1e+-5", "1Mi5",  "ki",    "KI",   "1KiB"}) {
    CHECK_THAT(Refusal(text), Contains(fmt::format("quantity \"{}\"", text)));
  }
  CHECK(Refusal("") == "quantity \"\": empty");
  CHECK_THAT(Refusal("1 Mi"), Contains("not a number with an optional suffix"));
  CHECK_THAT(Refusal("1i"), Contains("unknown suffix \"i\""));
}

TEST_CASE("quantity reads a suffix without digits as zero where upstream does") {
  // parseQuantityString reads a missing number as "0", and ParseQuantity accepts that whenever
  // its int64 fast path applies: a decimal scale of at least 1e-9, or a binary suffix up to Ti.
  for (const char* text : {"Mi", "Ki", "Ti", "k", "E", "m", "+", "-", ".", "-.", ".e-9", "e3"}) {
    INFO(text);
    CHECK(MustParse(text) == Quantity());
    CHECK(MustParse(text).ToString() == "0");
  }
  CHECK(MustParse("Mi").format() == F::kBinarySI);
  // Elsewhere it takes the big-decimal path, which needs a digit.
  for (const char* text : {"Pi", "Ei", "e-10", ".e-10", "-e-10"}) {
    CHECK_THAT(Refusal(text), Contains("no digits"));
  }
}

TEST_CASE("quantity refuses an exponent outside the int32 range") {
  // Upstream truncated it to 32 bits ("1e4294967297" read as 10) until kubernetes PR 141203.
  CHECK(MustParse("1e2147483647") == Amount(10, 2147483646));
  CHECK(MustParse("1e-2147483648") == Amount(1, -9));  // rounded up to a nano
  for (const char* text :
       {"1e2147483648", "1e-2147483649", "1e4294967297", "1e9223372036854775808"}) {
    CHECK_THAT(Refusal(text), Contains("out of range"));
  }
}

struct StringCase {
  Quantity q;
  const char* expect;
  const char* alternate;  // another spelling of the same amount, "" for none
};

// TestQuantityString: the canonical text of each amount and format. Upstream builds the
// amounts directly; we build them with FromInt/FromMilli or from a spelling that is not
// canonical (so that Parse computes the text rather than keeping the input).
std::vector<StringCase> StringCases() {
  return {
      {Quantity::FromInt(1LL << 30, F::kBinarySI), "1Gi", "1024Mi"},
      {Quantity::FromInt(300LL << 20, F::kBinarySI), "300Mi", "307200Ki"},
      {Quantity::FromInt(6 * 1024, F::kBinarySI), "6Ki", ""},
      {Quantity::FromInt(1001LL << 30, F::kBinarySI), "1001Gi", "1025024Mi"},
      {Quantity::FromInt(1LL << 40, F::kBinarySI), "1Ti", "1024Gi"},
      {Quantity::FromInt(5, F::kBinarySI), "5", "5000m"},
      {Quantity::FromMilli(500, F::kBinarySI), "500m", "0.5"},
      {Quantity::FromInt(1000000000, F::kDecimalSI), "1G", "1000M"},
      {Quantity::FromInt(1000000000, F::kDecimalSI), "1G", "0.001T"},
      {Quantity::FromMilli(1, F::kDecimalSI), "1m", "1000u"},
      {Quantity::FromMilli(80, F::kDecimalSI), "80m", ""},
      {Quantity::FromMilli(1080, F::kDecimalSI), "1080m", "1.08"},
      {Quantity::FromMilli(1080, F::kDecimalSI), "1080m", "1080000000n"},
      {MustParse("1.0800"), "1080m", ""},
      {Quantity::FromInt(300000000, F::kDecimalSI), "300M", ""},
      {Quantity::FromInt(1000000000000, F::kDecimalSI), "1T", ""},
      {Quantity::FromInt(1234567000000, F::kDecimalSI), "1234567M", ""},
      {Quantity::FromMilli(1234567, F::kBinarySI), "1234567m", ""},
      {Quantity::FromInt(3000, F::kDecimalSI), "3k", ""},
      {Quantity::FromInt(1025, F::kBinarySI), "1025", ""},
      {Quantity(), "0", ""},
      {Quantity::FromInt(0, F::kBinarySI), "0", ""},
      {MustParse(".001e12"), "1e9", ""},
      {MustParse("0.001e0"), "1e-3", ""},
      {MustParse("1000e-12"), "1e-9", ""},
      {MustParse("0.08e0"), "80e-3", ""},
      {MustParse("0.3e9"), "300e6", ""},
      {MustParse("1000e9"), "1e12", ""},
      {MustParse("1000e0"), "1e3", ""},
      {MustParse("3000e0"), "3e3", ""},
      {MustParse("0e3"), "0", ""},
      {MustParse("0.000000001"), "1n", ""},
      {MustParse("0.00000008"), "80n", ""},
      {MustParse("0.00000108"), "1080n", ""},
      {MustParse("0.0000010800"), "1080n", ""},
      {MustParse("0.000001"), "1u", ""},
      {MustParse("0.00008"), "80u", ""},
      {MustParse("0.00108"), "1080u", ""},
  };
}

TEST_CASE("quantity writes upstream's TestQuantityString canonical forms") {
  for (const StringCase& c : StringCases()) {
    INFO(c.expect);
    CHECK(c.q.ToString() == c.expect);
    // The canonical text parses back to the amount and is written as it was read.
    CHECK(MustParse(c.expect) == c.q);
    CHECK(MustParse(c.expect).ToString() == c.expect);
    if (std::string(c.alternate).empty()) continue;
    INFO(c.alternate);
    CHECK(MustParse(c.alternate) == c.q);
    CHECK(MustParse(c.alternate).ToString() == c.expect);
    // The negative amount is written with a minus sign and nothing else changed.
    CHECK(MustParse(std::string("-") + c.alternate).ToString() == std::string("-") + c.expect);
  }
}

TEST_CASE("quantity writes upstream's TestQuantityParseEmit forms") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"1Ki", "1Ki"},
      {"1Mi", "1Mi"},
      {"1Gi", "1Gi"},
      {"1024Mi", "1Gi"},
      {"1000M", "1G"},
      {".001Ki", "1024m"},
      {".000001Ki", "1024u"},
      {".000000001Ki", "1024n"},
      {".000000000001Ki", "2n"},
  };
  for (const auto& [in, expect] : cases) {
    INFO(in);
    CHECK(MustParse(in).ToString() == expect);
    CHECK(MustParse(std::string("-") + in).ToString() == std::string("-") + expect);
  }
}

TEST_CASE("quantity from milli units matches upstream's TestMilliNewSet") {
  // {value, format, expect, exact}; upstream's invalid format defaults to DecimalExponent.
  CHECK(Quantity::FromMilli(1, F::kDecimalSI).ToString() == "1m");
  CHECK(Quantity::FromMilli(1000, F::kDecimalSI).ToString() == "1");
  CHECK(Quantity::FromMilli(1234000, F::kDecimalSI).ToString() == "1234");
  CHECK(Quantity::FromMilli(1024, F::kBinarySI).ToString() == "1024m");  // format changes
  CHECK(Quantity::FromMilli(1000000, F::kDecimalExponent).ToString() == "1e3");
  CHECK(Quantity::FromMilli(1024 * 1024, F::kBinarySI).ToString() == "1048576m");
  for (const int64_t milli : {1, 1000, 1234000, 1000000}) {
    CHECK(MustParse(Quantity::FromMilli(milli).ToString()).MilliValue() == milli);
  }
  CHECK(Quantity::FromMilli(1024, F::kBinarySI).format() == F::kBinarySI);  // only the text
}

TEST_CASE("quantity from whole units matches upstream's TestNewSet") {
  const std::vector<std::tuple<int64_t, QuantityFormat, const char*>> cases = {
      {1, F::kDecimalSI, "1"},
      {1000, F::kDecimalSI, "1k"},
      {1234000, F::kDecimalSI, "1234k"},
      {1024, F::kBinarySI, "1Ki"},
      {1000000, F::kDecimalExponent, "1e6"},
      {1024 * 1024, F::kBinarySI, "1Mi"},
  };
  for (const auto& [value, format, expect] : cases) {
    INFO(expect);
    const Quantity q = Quantity::FromInt(value, format);
    CHECK(q.ToString() == expect);
    CHECK(MustParse(q.ToString()).Value() == value);
  }
  CHECK(Quantity::FromInt(1024).ToString() == "1Ki");  // BinarySI by default
}

TEST_CASE("quantity binary amounts that are not whole multiples of 1024 are written plainly") {
  CHECK(Quantity::FromInt(1025 * 1024 + 1, F::kBinarySI).ToString() == "1049601");
  CHECK(MustParse("1.5Ki").ToString() == "1536");
  CHECK(MustParse("1.5Gi").ToString() == "1536Mi");
  CHECK(MustParse("-1.5Gi").ToString() == "-1536Mi");
  CHECK(MustParse("2.5Ei").ToString() == "2560Pi");
  CHECK(MustParse("0.5Ki").ToString() == "512");  // below 1024: decimal
  // A fraction cannot be written in base 1024 without rounding: decimal, nothing lost.
  CHECK(MustParse("1.0001Ki").ToString() == "1024102400u");
  CHECK(MustParse("1.0001Ki").format() == F::kBinarySI);
  CHECK(Quantity::FromInt(kMax, F::kBinarySI).ToString() == "9223372036854775807");
  CHECK(Quantity::FromInt(-2048, F::kBinarySI).ToString() == "-2Ki");
  // -2^63 is -8Ei, but upstream's base-1024 step cannot negate it and writes it whole.
  CHECK(Quantity::FromInt(kMin, F::kBinarySI).ToString() == "-9223372036854775808");
  CHECK(Quantity::FromMilli(kMin).ToString() == "-9223372036854775808m");
  // BinarySI is capped at 2^63-1 on parse (upstream's maxAllowed); decimal amounts are not.
  CHECK(MustParse("9Ei").ToString() == "9223372036854775807");
  CHECK(MustParse("-9Ei").ToString() == "-9223372036854775807");
  CHECK(MustParse("12E").ToString() == "12E");
}

TEST_CASE("quantity keeps the parsed text where upstream's String returns it") {
  // ParseQuantity's fast path keeps the input as the output when it looks canonical, judging
  // the digits only: a sign, leading zeros and the exponent's spelling are kept too.
  for (const char* text : {"+1", "01", "1.500k", "1E3", "1e+3", "1e-0", "5.Ki", "-1.100"}) {
    INFO(text);
    CHECK(MustParse(text).ToString() == text);
  }
  CHECK(MustParse("1.500k") == Amount(1500, 0));
  // Otherwise the text is computed.
  CHECK(MustParse("1.5").ToString() == "1500m");
  CHECK(MustParse("1000k").ToString() == "1M");
  CHECK(MustParse("-0").ToString() == "0");
  CHECK(MustParse("0").ToString() == "0");
}

TEST_CASE("quantity writes decimal amounts past the E suffix with an exponent") {
  // Upstream wrote "1" for 1000E until kubernetes PR 140459 made it fall back to e-notation.
  CHECK(MustParse("1000E").ToString() == "1e21");
  CHECK(MustParse("10000E").ToString() == "10e21");
  CHECK(MustParse("-1000000000000000000000").ToString() == "-1e21");
  CHECK(MustParse("1000E") == Amount(1, 21));
  // An exponent past int32 is brought back into range, as kubernetes PR 142156 proposes, so
  // the text parses again.
  CHECK(MustParse("1000e2147483647").ToString() == "10000e2147483646");
  CHECK(MustParse("10000e2147483646") == MustParse("1000e2147483647"));
  // Digits beyond int64 are kept exactly.
  const Quantity big = MustParse("123456789012345678901234567890");
  CHECK(big.ToString() == "123456789012345678901234567890");
  CHECK(MustParse(big.ToString()) == big);
  CHECK(MustParse("123456789012345678.9").ToString() == "123456789012345678900m");
}

TEST_CASE("quantity values round up away from zero and saturate") {
  CHECK(MustParse("1024m").Value() == 2);
  CHECK(MustParse("1.5").Value() == 2);
  CHECK(MustParse("-1.5").Value() == -2);
  CHECK(MustParse("1.0001Ki").MilliValue() == 1024103);
  CHECK(MustParse("1n").MilliValue() == 1);
  CHECK(MustParse("-1n").MilliValue() == -1);
  CHECK(MustParse("-0.0000000015").Value() == -1);  // upstream's big-decimal path gives 1
  CHECK(MustParse("100m").MilliValue() == 100);
  CHECK(MustParse("2Gi").Value() == 2147483648);
  CHECK(MustParse("9223372036854775807").Value() == kMax);
  CHECK(MustParse("-9223372036854775808").Value() == kMin);
  // Past int64 upstream wraps or returns 0; we saturate.
  CHECK(MustParse("9223372036854775808").Value() == kMax);
  CHECK(MustParse("-9223372036854775809").Value() == kMin);
  CHECK(MustParse("12E").Value() == kMax);
  CHECK(MustParse("-12E").Value() == kMin);
  CHECK(MustParse("9Ei").MilliValue() == kMax);
  CHECK(MustParse("1e2147483647").MilliValue() == kMax);
  CHECK(Quantity::FromMilli(kMin).MilliValue() == kMin);
  CHECK(Quantity::FromMilli(kMin).Value() == -9223372036854775LL - 1);
  CHECK(Quantity().Value() == 0);
}

TEST_CASE("quantity equality compares amounts not spellings") {
  CHECK(MustParse("1Ki") == MustParse("1024"));
  CHECK(MustParse("1Ki") == Quantity::FromMilli(1024000));
  CHECK(MustParse("1.5") == MustParse("1500m"));
  CHECK(MustParse("1e3") == MustParse("1k"));
  CHECK_FALSE(MustParse("1") == MustParse("1001m"));
  CHECK_FALSE(MustParse("1") == MustParse("-1"));
  CHECK(MustParse("-0") == Quantity());
}

TEST_CASE("quantity as a double") {
  CHECK(MustParse("1.5").AsDouble() == 1.5);
  CHECK(MustParse("1Ki").AsDouble() == 1024.0);
  CHECK(MustParse("-2n").AsDouble() == -2e-9);
  CHECK(MustParse("100m").AsDouble() == 0.1);
  CHECK(MustParse("12E").AsDouble() == 1.2e19);
  CHECK(MustParse("1e400").AsDouble() == std::numeric_limits<double>::infinity());
  CHECK(MustParse("-1e400").AsDouble() == -std::numeric_limits<double>::infinity());
  CHECK(Quantity().AsDouble() == 0.0);
}

TEST_CASE("quantity round trips through its text") {
  for (const char* text :
       {"1500m", "2Gi", "1536Mi", "100M", "1e3", "0.1", "-7.5Ki", "12E", "1000E", "3.001n",
        "0.000000000001Ki", "1e-2147483648", "99999999999999999999999e99"}) {
    INFO(text);
    const Quantity q = MustParse(text);
    CHECK(MustParse(q.ToString()) == q);
  }
}

}  // namespace
}  // namespace qrm
