// The JSON reading and writing rules of Go's encoding/json that the extender codecs follow
// (cluster/extender/go_json_reader.h, go_json_writer.h). Expected strings were checked against
// Go's encoder and decoder on the same values (except \b and \f, written as \u0008 and \u000c
// before Go 1.22).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cluster/extender/go_json_reader.h"
#include "cluster/extender/go_json_writer.h"

namespace qrm::extender {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

// A parsed document and a decoder for it, named "T" in messages.
struct Doc {
  explicit Doc(std::string_view text) {
    const Status s = doc.Parse(text);
    INFO(text);
    REQUIRE(s.ok());
  }
  const JsonValue& root() const { return doc.root(); }
  const JsonValue& At(const char* key) const { return doc.root()[key]; }
  GoDecoder decoder() const { return GoDecoder(doc, "T"); }

  JsonDocument doc;
};

std::string ParseError(std::string_view text) {
  JsonDocument doc;
  const Status s = doc.Parse(text);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kInvalidArgument);
  return s.message();
}

TEST_CASE("go json strings are escaped as Go writes them") {
  CHECK(GoJsonQuote("plain text") == R"("plain text")");
  CHECK(GoJsonQuote("a\"b\\c") == R"("a\"b\\c")");
  CHECK(GoJsonQuote("\n\r\t\b\f") == R"("\n\r\t\b\f")");
  CHECK(GoJsonQuote(std::string("\x01\x1f\x7f", 3)) == "\"\\u0001\\u001f\x7f\"");
  CHECK(GoJsonQuote(std::string(1, '\0')) == R"("\u0000")");
  CHECK(GoJsonQuote("<a href='x'>&</a>") == R"("\u003ca href='x'\u003e\u0026\u003c/a\u003e")");
  CHECK(GoJsonQuote("/") == R"("/")");
  CHECK(GoJsonQuote("\u2028\u2029") == R"("\u2028\u2029")");
  CHECK(GoJsonQuote("é€😀") == "\"é€😀\"");
}

TEST_CASE("go json strings replace each byte that is not UTF-8 with U+FFFD") {
  CHECK(GoJsonQuote("\xff") == R"("\ufffd")");
  CHECK(GoJsonQuote("a\xc3") == R"("a\ufffd")");                              // cut short
  CHECK(GoJsonQuote("\xc0\x80") == R"("\ufffd\ufffd")");                      // overlong
  CHECK(GoJsonQuote("\xed\xa0\x80") == R"("\ufffd\ufffd\ufffd")");            // a surrogate
  CHECK(GoJsonQuote("\xf4\x90\x80\x80") == R"("\ufffd\ufffd\ufffd\ufffd")");  // past U+10FFFF
  CHECK(GoJsonQuote("\xe2\x82") == R"("\ufffd\ufffd")");
}

TEST_CASE("go json writer separates items and keys") {
  GoJsonWriter w;
  w.BeginObject();
  w.Key("a");
  w.BeginArray();
  w.Int(-1);
  w.Bool(true);
  w.Null();
  w.BeginObject();
  w.EndObject();
  w.Raw("1.50");
  w.EndArray();
  w.Key("b<");
  w.String("x");
  w.EndObject();
  CHECK(w.Take() == R"({"a":[-1,true,null,{},1.50],"b\u003c":"x"})");
}

TEST_CASE("go json keys match fields whatever their case") {
  CHECK(GoKeyMatches("Pod", "Pod"));
  CHECK(GoKeyMatches("pod", "Pod"));
  CHECK(GoKeyMatches("POD", "Pod"));
  CHECK(GoKeyMatches("nodenames", "NodeNames"));
  CHECK(GoKeyMatches("\xc5\xbfpec", "spec"));      // U+017F folds to s
  CHECK(GoKeyMatches("\xe2\x84\xaaind", "kind"));  // U+212A (Kelvin) folds to k
  CHECK_FALSE(GoKeyMatches("Pods", "Pod"));
  CHECK_FALSE(GoKeyMatches("Po", "Pod"));
  CHECK_FALSE(GoKeyMatches("node_names", "NodeNames"));
  CHECK_FALSE(GoKeyMatches("\xc3\xa9", "e"));
}

TEST_CASE("go json documents keep numbers as written") {
  const Doc d(R"({"a":1.50,"b":1e3,"c":-0,"d":"1.50","e":12345678901234567890123})");
  for (const char* key : {"a", "b", "c", "e"}) {
    INFO(key);
    CHECK(d.doc.IsNumber(d.At(key)));
  }
  CHECK(std::string_view(d.At("a").GetString(), d.At("a").GetStringLength()) == "1.50");
  CHECK_FALSE(d.doc.IsNumber(d.At("d")));
  CHECK(d.doc.Text(d.root()) ==
        R"({"a":1.50,"b":1e3,"c":-0,"d":"1.50","e":12345678901234567890123})");
}

TEST_CASE("go json documents are written back compact with Go's escapes") {
  const Doc d("{ \"k\" : [ true , false , null , \"<\\u00e9\\n>\" , {} , [ ] ] }");
  CHECK(d.doc.Text(d.root()) == R"({"k":[true,false,null,"\u003cé\n\u003e",{},[]]})");
}

TEST_CASE("go json refuses what is not one JSON value") {
  CHECK_THAT(ParseError(""), StartsWith("invalid JSON at byte 0: "));
  CHECK_THAT(ParseError("{\"a\":1,}"), StartsWith("invalid JSON at byte 7: "));
  CHECK_THAT(ParseError("{} {}"), Contains("not be followed by other values"));
  CHECK_THAT(ParseError("{\"a\":01}"), StartsWith("invalid JSON at byte"));
  CHECK_THAT(ParseError("{\"a\":\"\xff\"}"), Contains("encoding"));
  CHECK_THAT(ParseError("[1,2"), StartsWith("invalid JSON at byte 4: "));
}

TEST_CASE("go json refuses nesting deeper than Go's decoder accepts") {
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  JsonDocument deep;
  REQUIRE(deep.Parse(ok).ok());
  CHECK(deep.Text(deep.root()) == ok);  // written back without recursion
  const std::string too_deep = "[" + ok + "]";
  CHECK_THAT(ParseError(too_deep), Contains("nested deeper than 10000 levels"));
  std::string objects;
  for (int i = 0; i <= kMaxJsonDepth; ++i) objects += "{\"a\":";
  CHECK_THAT(ParseError(objects), Contains("nested deeper"));
}

TEST_CASE("go json paths name keys and indexes as written") {
  const JsonPath top;
  CHECK(top.ToString() == "(top)");
  const JsonPath pod = top.Key("Pod");
  const JsonPath spec = pod.Key("spec");
  const JsonPath containers = spec.Key("containers");
  const JsonPath second = containers.Index(1);
  const JsonPath resources = second.Key("resources");
  const JsonPath requests = resources.Key("requests");
  CHECK(requests.Key("cpu").ToString() == "Pod.spec.containers[1].resources.requests.cpu");
  CHECK(requests.Key("nvidia.com/gpu").ToString() ==
        "Pod.spec.containers[1].resources.requests.\"nvidia.com/gpu\"");
  CHECK(top.Index(0).Key("Host").ToString() == "[0].Host");
}

TEST_CASE("go json strings and integers refuse other JSON types") {
  const Doc d(R"({"s":"x","n":5,"f":1.0,"e":1e2,"big":3000000000,"neg0":-0,"t":true,"nul":null,
                  "o":{},"a":[],"i64max":9223372036854775807,"i64over":9223372036854775808})");
  const GoDecoder g = d.decoder();
  const JsonPath top;
  std::string s = "kept";
  CHECK(g.ReadString(d.At("nul"), top.Key("nul"), s).ok());
  CHECK(s == "kept");  // null leaves a string as it is
  CHECK(g.ReadString(d.At("n"), top.Key("n"), s).message() == "T: n: expected a string, got 5");
  CHECK(g.ReadString(d.At("t"), top.Key("t"), s).message() == "T: t: expected a string, got true");
  CHECK(g.ReadString(d.At("o"), top.Key("o"), s).message() ==
        "T: o: expected a string, got an object");
  CHECK(g.ReadString(d.At("a"), top.Key("a"), s).message() ==
        "T: a: expected a string, got an array");

  int32_t i32 = 7;
  CHECK(g.ReadInt32(d.At("nul"), top.Key("nul"), i32).ok());
  CHECK(i32 == 7);
  CHECK(g.ReadInt32(d.At("neg0"), top.Key("neg0"), i32).ok());
  CHECK(i32 == 0);
  CHECK(g.ReadInt32(d.At("f"), top.Key("f"), i32).message() == "T: f: expected an int32, got 1.0");
  CHECK(g.ReadInt32(d.At("e"), top.Key("e"), i32).message() == "T: e: expected an int32, got 1e2");
  CHECK(g.ReadInt32(d.At("big"), top.Key("big"), i32).message() ==
        "T: big: expected an int32, got 3000000000");
  CHECK(g.ReadInt32(d.At("s"), top.Key("s"), i32).message() ==
        "T: s: expected an int32, got \"x\"");
  int64_t i64 = 0;
  CHECK(g.ReadInt64(d.At("big"), top.Key("big"), i64).ok());
  CHECK(i64 == 3000000000);
  CHECK(g.ReadInt64(d.At("i64max"), top.Key("i64max"), i64).ok());
  CHECK(i64 == INT64_MAX);
  CHECK(g.ReadInt64(d.At("i64over"), top.Key("i64over"), i64).message() ==
        "T: i64over: expected an int64, got 9223372036854775808");

  std::optional<int32_t> priority = 3;
  CHECK(g.ReadOptionalInt32(d.At("nul"), top.Key("nul"), priority).ok());
  CHECK_FALSE(priority.has_value());  // null is Go's nil pointer
  CHECK(g.ReadOptionalInt32(d.At("n"), top.Key("n"), priority).ok());
  CHECK(priority == 5);
}

TEST_CASE("go json quantities read as Quantity.UnmarshalJSON reads them") {
  // TestJSONWhitespace (apimachinery quantity_test.go): spaces around the text, numbers.
  const Doc d(R"({"a":" 1","b":"1 ","c":1,"d":10,"e":-1,"f":1.5,"g":1e3,"h":"1500m","i":null,
                  "j":true,"k":"\t1","l":"12x","m":{},"n":"\u00a01\u3000"})");
  const GoDecoder g = d.decoder();
  const JsonPath top;
  const auto read = [&](const char* key) {
    Quantity q = Quantity::FromInt(99);
    const Status s = g.ReadQuantity(d.At(key), top.Key(key), q);
    return s.ok() ? q.ToString() : s.message();
  };
  CHECK(read("a") == "1");
  CHECK(read("b") == "1");
  CHECK(read("c") == "1");
  CHECK(read("d") == "10");
  CHECK(read("e") == "-1");
  CHECK(read("f") == "1500m");
  CHECK(read("g") == "1e3");
  CHECK(read("h") == "1500m");
  CHECK(read("i") == "0");  // null is the zero quantity
  CHECK(read("n") == "1");  // raw Unicode spaces are trimmed
  CHECK(read("j") == "T: j: expected a quantity, got true");
  CHECK(read("m") == "T: m: expected a quantity, got an object");
  // An escaped tab is not trimmed: Go hands the raw text, backslash and all, to ParseQuantity.
  CHECK_THAT(read("k"), StartsWith("T: k: \"\\t1\" is not a quantity: "));
  CHECK(read("l") ==
        "T: l: \"12x\" is not a quantity: not a number with an optional suffix "
        "(^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$)");
}

TEST_CASE("go json maps add to what is there and read null values as zero") {
  const Doc d(R"({"m":{"a":"1","b":null,"a":"2"},"n":null,"q":{"cpu":"1","mem":null},
                  "bad":{"x":1}})");
  const GoDecoder g = d.decoder();
  const JsonPath top;
  std::map<std::string, std::string> m = {{"old", "kept"}};
  REQUIRE(g.ReadStringMap(d.At("m"), top.Key("m"), m).ok());
  CHECK(m == std::map<std::string, std::string>{{"a", "2"}, {"b", ""}, {"old", "kept"}});
  REQUIRE(g.ReadStringMap(d.At("n"), top.Key("n"), m).ok());
  CHECK(m.empty());
  std::map<std::string, Quantity> q;
  REQUIRE(g.ReadQuantityMap(d.At("q"), top.Key("q"), q).ok());
  CHECK(q.at("cpu") == Quantity::FromInt(1));
  CHECK(q.at("mem") == Quantity());
  CHECK(g.ReadStringMap(d.At("bad"), top.Key("bad"), m).message() ==
        "T: bad.x: expected a string, got 1");
  CHECK(g.ReadStringMap(d.At("q").FindMember("cpu")->value, top.Key("q"), m).message() ==
        "T: q: expected an object, got \"1\"");
}

TEST_CASE("go json lists are replaced element by element") {
  const Doc d(R"({"l":["a",null],"n":null,"e":[],"bad":["a",2]})");
  const GoDecoder g = d.decoder();
  const JsonPath top;
  std::vector<std::string> l = {"x", "y", "z"};
  REQUIRE(g.ReadStringList(d.At("l"), top.Key("l"), l).ok());
  // Go reuses the elements it finds: a null string element leaves the old one.
  CHECK(l == std::vector<std::string>{"a", "y"});
  REQUIRE(g.ReadStringList(d.At("e"), top.Key("e"), l).ok());
  CHECK(l.empty());
  CHECK(g.ReadStringList(d.At("bad"), top.Key("bad"), l).message() ==
        "T: bad[1]: expected a string, got 2");
  std::optional<std::vector<std::string>> names = std::vector<std::string>{"x"};
  REQUIRE(g.ReadOptionalStringList(d.At("n"), top.Key("n"), names).ok());
  CHECK_FALSE(names.has_value());
  REQUIRE(g.ReadOptionalStringList(d.At("e"), top.Key("e"), names).ok());
  CHECK(names == std::vector<std::string>{});  // [] is an empty list, not nil
  CHECK(g.ReadOptionalStringList(d.At("l").GetArray()[0], top.Key("l"), names).message() ==
        "T: l: expected an array, got \"a\"");
}

TEST_CASE("go json structs take matching keys in order and skip the rest") {
  const Doc d(R"({"Name":"a","unknown":{"deep":[1,2,{"x":null}]},"NAME":"b","Other":5})");
  const GoDecoder g = d.decoder();
  std::vector<std::string> seen;
  std::string name;
  REQUIRE(g.ReadStruct(d.root(), JsonPath(), {"name", "other"},
                       [&](size_t field, const JsonValue& v, const JsonPath& p) {
                         seen.push_back(p.ToString());
                         if (field == 0) return g.ReadString(v, p, name);
                         return Status::Ok();
                       })
              .ok());
  CHECK(seen == std::vector<std::string>{"Name", "NAME", "Other"});
  CHECK(name == "b");  // the last one wins
  const Doc list("[1]");
  CHECK(g.ReadStruct(list.root(), JsonPath(), {"x"}, [](size_t, const JsonValue&, const JsonPath&) {
           return Status::Ok();
         }).message() == "T: (top): expected an object, got an array");
}

}  // namespace
}  // namespace qrm::extender
