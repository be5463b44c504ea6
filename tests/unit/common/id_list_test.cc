#include "common/id_list.h"

#include <climits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace qrm {
namespace {

using Catch::Matchers::Contains;

std::vector<IdRange> ParseOk(std::string_view text, int max_id = 8191) {
  StatusOr<std::vector<IdRange>> r = ParseIdList(text, max_id, "cpu list");
  INFO("text: \"" << std::string(text) << "\" status: " << r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

Status ParseError(std::string_view text, int max_id = 8191) {
  StatusOr<std::vector<IdRange>> r = ParseIdList(text, max_id, "cpu list");
  INFO("text: \"" << std::string(text) << "\"");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  return r.status();
}

// Each malformed input is its own SECTION so a failure names the input.
void ExpectRejected(const std::string& text, const std::string& reason_fragment) {
  const Status s = ParseError(text);
  INFO(s.ToString());
  CHECK_THAT(s.message(), Contains("cpu list \"" + text + "\""));
  CHECK_THAT(s.message(), Contains(reason_fragment));
}

TEST_CASE("ParseIdList accepts the kernel's list format", "[id_list]") {
  CHECK(ParseOk("").empty());
  CHECK(ParseOk("5") == std::vector<IdRange>{{5, 5}});
  CHECK(ParseOk("0") == std::vector<IdRange>{{0, 0}});
  CHECK(ParseOk("0-3,8-11") == std::vector<IdRange>{{0, 3}, {8, 11}});
  CHECK(ParseOk("0-0") == std::vector<IdRange>{{0, 0}});
  CHECK(ParseOk("1,3,5") == std::vector<IdRange>{{1, 1}, {3, 3}, {5, 5}});
  // Leading zeros are decimal, as in the kernel's parser.
  CHECK(ParseOk("007,010") == std::vector<IdRange>{{7, 7}, {10, 10}});
}

TEST_CASE("ParseIdList normalizes to sorted disjoint ranges", "[id_list]") {
  CHECK(ParseOk("3,0-1,2") == std::vector<IdRange>{{0, 3}});
  CHECK(ParseOk("8-11,0-3") == std::vector<IdRange>{{0, 3}, {8, 11}});
  CHECK(ParseOk("0,1,2,3") == std::vector<IdRange>{{0, 3}});
}

TEST_CASE("ParseIdList accepts duplicates and overlaps as a union", "[id_list]") {
  CHECK(ParseOk("1,1") == std::vector<IdRange>{{1, 1}});
  CHECK(ParseOk("0-3,2-5") == std::vector<IdRange>{{0, 5}});
  CHECK(ParseOk("0-10,2-3") == std::vector<IdRange>{{0, 10}});
  CHECK(ParseOk("4,0-7,4") == std::vector<IdRange>{{0, 7}});
}

TEST_CASE("ParseIdList rejects malformed input", "[id_list]") {
  SECTION("3-1") {
    ExpectRejected("3-1", "range \"3-1\" starts above its end");
  }
  SECTION("0-3,5-2") {
    ExpectRejected("0-3,5-2", "range \"5-2\" starts above its end");
  }
  SECTION("1,,2") {
    ExpectRejected("1,,2", "empty element");
  }
  SECTION(",1") {
    ExpectRejected(",1", "empty element");
  }
  SECTION("1,") {
    ExpectRejected("1,", "empty element");
  }
  SECTION(",") {
    ExpectRejected(",", "empty element");
  }
  SECTION("a") {
    ExpectRejected("a", "element \"a\" is not a decimal id or range");
  }
  SECTION("-1") {
    ExpectRejected("-1", "range \"-1\" has no start");
  }
  SECTION("1-") {
    ExpectRejected("1-", "range \"1-\" has no end");
  }
  SECTION("-") {
    ExpectRejected("-", "range \"-\" has no start");
  }
  SECTION("leading space") {
    ExpectRejected(" 1", "element \" 1\" is not a decimal id");
  }
  SECTION("trailing space") {
    ExpectRejected("1 ", "element \"1 \" is not a decimal id");
  }
  SECTION("space after comma") {
    ExpectRejected("1, 2", "element \" 2\" is not a decimal id");
  }
  SECTION("+1") {
    ExpectRejected("+1", "element \"+1\" is not a decimal id");
  }
  SECTION("0x1") {
    ExpectRejected("0x1", "element \"0x1\" is not a decimal id");
  }
  SECTION("1-2-3") {
    ExpectRejected("1-2-3", "element \"1-2-3\" is not a decimal id or range");
  }
  SECTION("1--2") {
    ExpectRejected("1--2", "element \"1--2\"");
  }
  SECTION("a-3") {
    ExpectRejected("a-3", "element \"a-3\"");
  }
  SECTION("stride syntax") {
    ExpectRejected("0-7:2/4", "element \"0-7:2/4\"");
  }
  SECTION("decimal point") {
    ExpectRejected("1.0", "element \"1.0\"");
  }
}

TEST_CASE("ParseIdList rejects a trailing newline and TrimSysfsValue removes it", "[id_list]") {
  const Status s = ParseError("0-3\n");
  // The newline is escaped in the message so the message stays on one line.
  CHECK_THAT(s.message(), Contains("cpu list \"0-3\\n\""));
  CHECK(s.message().find('\n') == std::string::npos);

  CHECK(TrimSysfsValue("0-3\n") == "0-3");
  CHECK(TrimSysfsValue("0-3") == "0-3");
  CHECK(TrimSysfsValue("\n") == "");
  CHECK(TrimSysfsValue("") == "");
  CHECK(TrimSysfsValue("0-3 \r\n") == "0-3");
  CHECK(TrimSysfsValue(" 0-3\n") == " 0-3");  // leading whitespace is kept and then rejected
  CHECK(ParseOk(TrimSysfsValue("0-3,8-11\n")) == std::vector<IdRange>{{0, 3}, {8, 11}});
  CHECK(ParseOk(TrimSysfsValue("\n")).empty());  // an empty cpuset.cpus file
}

TEST_CASE("ParseIdList enforces the maximum id", "[id_list]") {
  SECTION("max accepted") {
    CHECK(ParseOk("8191") == std::vector<IdRange>{{8191, 8191}});
  }
  SECTION("range ending at max accepted") {
    CHECK(ParseOk("0-8191") == std::vector<IdRange>{{0, 8191}});
  }
  SECTION("max+1 rejected") {
    const Status s = ParseError("8192");
    CHECK(s.message() == "cpu list \"8192\": id 8192 exceeds the maximum 8191");
  }
  SECTION("range end above max") {
    const Status s = ParseError("0-9000");
    CHECK(s.message() == "cpu list \"0-9000\": id 9000 exceeds the maximum 8191");
  }
  SECTION("small caller maximum") {
    CHECK(ParseOk("0-3", 3) == std::vector<IdRange>{{0, 3}});
    const Status s = ParseError("0-4", 3);
    CHECK_THAT(s.message(), Contains("id 4 exceeds the maximum 3"));
  }
  SECTION("maximum of zero") {
    CHECK(ParseOk("0", 0) == std::vector<IdRange>{{0, 0}});
    CHECK_THAT(ParseError("1", 0).message(), Contains("id 1 exceeds the maximum 0"));
  }
  SECTION("negative maximum allows only the empty list") {
    CHECK(ParseOk("", -1).empty());
    const Status s = ParseError("0", -1);
    CHECK_THAT(s.message(), Contains("only the empty list is valid"));
  }
  SECTION("INT_MAX maximum") {
    CHECK(ParseOk("2147483647", INT_MAX) == std::vector<IdRange>{{INT_MAX, INT_MAX}});
    CHECK(ParseOk("2147483646,2147483647", INT_MAX) ==
          std::vector<IdRange>{{INT_MAX - 1, INT_MAX}});
    const Status s = ParseError("2147483648", INT_MAX);
    CHECK_THAT(s.message(), Contains("id 2147483648 exceeds the maximum 2147483647"));
  }
}

TEST_CASE("ParseIdList reports numeric overflow instead of wrapping", "[id_list]") {
  SECTION("20 digits") {
    const Status s = ParseError("99999999999999999999");
    CHECK_THAT(s.message(), Contains("cpu list \"99999999999999999999\""));
    CHECK_THAT(s.message(), Contains("id 99999999999999999999 exceeds the maximum 8191"));
  }
  SECTION("2^64 wraps to 0 in naive parsers") {
    const Status s = ParseError("18446744073709551616");
    CHECK_THAT(s.message(), Contains("id 18446744073709551616 exceeds"));
  }
  SECTION("2^32 + 1 wraps to 1 in naive parsers") {
    const Status s = ParseError("0-4294967297");
    CHECK_THAT(s.message(), Contains("id 4294967297 exceeds"));
  }
  SECTION("overflow with INT_MAX maximum") {
    CHECK_THAT(ParseError("99999999999999999999999999999999", INT_MAX).message(),
               Contains("id 99999999999999999999999999999999 exceeds the maximum 2147483647"));
  }
  SECTION("many leading zeros do not overflow") {
    CHECK(ParseOk("0000000000000000000000000001") == std::vector<IdRange>{{1, 1}});
  }
}

TEST_CASE("ParseIdList names what is being parsed", "[id_list]") {
  StatusOr<std::vector<IdRange>> r = ParseIdList("2-1", 63, "NUMA node list");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "NUMA node list \"2-1\": range \"2-1\" starts above its end");
}

TEST_CASE("ParseIdList truncates very long text in messages", "[id_list]") {
  std::string text;
  for (int i = 0; i < 200; ++i) text += std::to_string(i * 2) + ",";
  text += "x";
  const Status s = ParseError(text);
  CHECK(s.message().size() < 300);
  CHECK_THAT(s.message(), Contains("element \"x\""));
  CHECK_THAT(s.message(), Contains(std::to_string(text.size()) + " bytes"));
}

TEST_CASE("FormatIdRanges and FormatIdList print canonical lists", "[id_list]") {
  CHECK(FormatIdRanges(std::vector<IdRange>{}) == "");
  CHECK(FormatIdRanges(std::vector<IdRange>{{0, 3}, {8, 11}}) == "0-3,8-11");
  CHECK(FormatIdRanges(std::vector<IdRange>{{5, 5}}) == "5");
  CHECK(FormatIdRanges(std::vector<IdRange>{{0, 1}}) == "0-1");
  CHECK(FormatIdRanges(std::vector<IdRange>{{0, 1}, {2, 3}}) == "0-3");  // adjacent merged

  CHECK(FormatIdList(std::vector<int>{}) == "");
  CHECK(FormatIdList(std::vector<int>{0, 1, 2, 3}) == "0-3");
  CHECK(FormatIdList(std::vector<int>{5, 3}) == "3,5");
  CHECK(FormatIdList(std::vector<int>{1, 3}) == "1,3");
  CHECK(FormatIdList(std::vector<int>{0, 1}) == "0-1");
  CHECK(FormatIdList(std::vector<int>{3, 3, 2, 1, 7}) == "1-3,7");
  CHECK(FormatIdList(std::vector<int>{INT_MAX - 1, INT_MAX}) == "2147483646-2147483647");
}

}  // namespace
}  // namespace qrm
