#include "checkpoint/canonical_json.h"

#include <catch2/catch.hpp>

#include "checkpoint/checksum.h"

namespace qrm::checkpoint {
namespace {

rapidjson::Document ParseJson(const char* text) {
  rapidjson::Document doc;
  doc.Parse(text);
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

TEST_CASE("FNV-1a 64 matches the published test vectors", "[checksum]") {
  CHECK(Fnv1a64("") == 0xcbf29ce484222325ULL);
  CHECK(Fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(Fnv1a64("foobar") == 0x85944171f73967e8ULL);
  CHECK(FormatChecksum("a") == "fnv1a64:af63dc4c8601ec8c");
}

TEST_CASE("canonical JSON sorts keys bytewise and drops whitespace", "[canonical]") {
  auto doc = ParseJson(R"({ "b": [1, {"z": true, "a": null}], "a": -5, "A": "x", "é": 1 })");
  auto canonical = CanonicalJson(doc);
  REQUIRE(canonical.ok());
  CHECK(*canonical == R"({"A":"x","a":-5,"b":[1,{"a":null,"z":true}],"é":1})");
}

TEST_CASE("canonical JSON escapes exactly like Python's json.dumps", "[canonical]") {
  auto doc = ParseJson(R"({"s": "q\"b\\s/\b\f\n\r\t\u0001\u001f\u007f é€😀"})");
  auto canonical = CanonicalJson(doc);
  REQUIRE(canonical.ok());
  CHECK(*canonical == "{\"s\":\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f é€😀\"}");
}

TEST_CASE("canonical JSON keeps 64-bit integers exact", "[canonical]") {
  auto doc = ParseJson(R"({"max": 18446744073709551615, "min": -9223372036854775808, "z": 0})");
  auto canonical = CanonicalJson(doc);
  REQUIRE(canonical.ok());
  CHECK(*canonical == R"({"max":18446744073709551615,"min":-9223372036854775808,"z":0})");
}

TEST_CASE("canonical JSON refuses what other languages would write differently", "[canonical]") {
  SECTION("floating-point numbers, naming the path") {
    auto doc = ParseJson(R"({"pods": [{"cpu": 1.5}]})");
    auto canonical = CanonicalJson(doc);
    REQUIRE_FALSE(canonical.ok());
    CHECK(canonical.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(canonical.status().message(), Catch::Contains("data.pods[0].cpu"));
    CHECK_THAT(canonical.status().message(), Catch::Contains("1.5"));
  }
  SECTION("duplicate keys") {
    auto doc = ParseJson(R"({"k": 1, "k": 2})");
    auto canonical = CanonicalJson(doc);
    REQUIRE_FALSE(canonical.ok());
    CHECK_THAT(canonical.status().message(), Catch::Contains("duplicate key \"k\""));
  }
  SECTION("strings that are not UTF-8") {
    rapidjson::Document doc;
    doc.SetObject();
    const char raw[] = {'a', static_cast<char>(0xff), 'b'};
    doc.AddMember("blob", rapidjson::Value(raw, 3, doc.GetAllocator()), doc.GetAllocator());
    auto canonical = CanonicalJson(doc);
    REQUIRE_FALSE(canonical.ok());
    CHECK_THAT(canonical.status().message(), Catch::Contains("data.blob"));
    CHECK_THAT(canonical.status().message(), Catch::Contains("base64"));
  }
}

}  // namespace
}  // namespace qrm::checkpoint
