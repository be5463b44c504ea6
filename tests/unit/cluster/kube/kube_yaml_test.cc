#include "cluster/kube/kube_yaml.h"

#include <string>
#include <string_view>

#include <catch2/catch.hpp>

namespace qrm::kube {
namespace {

using Catch::Matchers::Contains;
using Kind = DocNode::Kind;

DocNode MustParse(std::string_view text) {
  StatusOr<DocNode> doc = ParseYamlOrJson(text);
  INFO(text);
  REQUIRE(doc.ok());
  return *doc;
}

const DocNode& At(const DocNode& map, std::string_view key) {
  const DocNode* v = map.Find(key);
  INFO(key);
  REQUIRE(v != nullptr);
  return *v;
}

// The error of a document that must be refused.
std::string Refusal(std::string_view text) {
  StatusOr<DocNode> doc = ParseYamlOrJson(text);
  INFO(text);
  REQUIRE_FALSE(doc.ok());
  CHECK(doc.status().code() == StatusCode::kInvalidArgument);
  return doc.status().message();
}

TEST_CASE("kubectl style YAML parses to its tree") {
  const DocNode doc = MustParse(R"(apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: TFMwdA==
    server: https://127.0.0.1:6443
  name: kind-kind
contexts:
- context:
    cluster: kind-kind
    user: kind-kind
  name: kind-kind
current-context: kind-kind
kind: Config
preferences: {}
users:
- name: kind-kind
  user:
    token: abc.def
)");
  REQUIRE(doc.kind == Kind::kMap);
  CHECK(doc.entries.size() == 7);
  CHECK(At(doc, "apiVersion").scalar == "v1");
  const DocNode& clusters = At(doc, "clusters");
  REQUIRE(clusters.kind == Kind::kSeq);
  REQUIRE(clusters.items.size() == 1);
  const DocNode& cluster = At(clusters.items[0], "cluster");
  CHECK(At(cluster, "server").scalar == "https://127.0.0.1:6443");
  CHECK(At(cluster, "certificate-authority-data").scalar == "TFMwdA==");
  CHECK(At(clusters.items[0], "name").scalar == "kind-kind");
  CHECK(At(doc, "preferences").kind == Kind::kMap);
  CHECK(At(doc, "preferences").entries.empty());
  CHECK(At(At(At(doc, "users").items[0], "user"), "token").scalar == "abc.def");
  CHECK(At(doc, "kind").line == 13);
}

TEST_CASE("indented sequences and nested items parse") {
  const DocNode doc = MustParse("a:\n  - x\n  - y: 1\n    z: 2\n  -\n    w: 3\n  - - p\n    - q\n");
  const DocNode& a = At(doc, "a");
  REQUIRE(a.items.size() == 4);
  CHECK(a.items[0].scalar == "x");
  CHECK(At(a.items[1], "z").scalar == "2");
  CHECK(At(a.items[2], "w").scalar == "3");
  REQUIRE(a.items[3].kind == Kind::kSeq);
  CHECK(a.items[3].items[1].scalar == "q");
}

TEST_CASE("quoted scalars resolve escapes and quotes") {
  const DocNode doc = MustParse(
      "s: 'it''s # not a comment'\n"
      "d: \"tab\\tnl\\n\\x41\\u00e9\\\"q\\\\\"\n"
      "n: \"true\"\n"
      "\"quoted key\": 1\n"
      "b: true   # a comment\n");
  CHECK(At(doc, "s").scalar == "it's # not a comment");
  CHECK(At(doc, "d").scalar == "tab\tnl\nA\xc3\xa9\"q\\");
  CHECK(At(doc, "n").quoted);
  CHECK_FALSE(At(doc, "b").quoted);
  CHECK(At(doc, "b").scalar == "true");
  CHECK(At(doc, "quoted key").scalar == "1");
}

TEST_CASE("long values folded over several lines are joined") {
  const DocNode doc = MustParse(
      "a: one two\n  three\n"
      "b: \"x y\n  z\\\n  w\"\n"
      "c: 'p\n\n  q'\n"
      "d: last\n");
  CHECK(At(doc, "a").scalar == "one two three");
  CHECK(At(doc, "b").scalar == "x y zw");
  CHECK(At(doc, "c").scalar == "p\nq");
  CHECK(At(doc, "d").scalar == "last");
}

TEST_CASE("comments blank lines document marker and nulls") {
  const DocNode doc = MustParse(
      "# kubeconfig\n---\n\na:   # nothing\nb: ~\nc: null\nd: []\ne: { }\nf: a#b\n  # end\n");
  CHECK(At(doc, "a").kind == Kind::kNull);
  CHECK(At(doc, "b").kind == Kind::kNull);
  CHECK(At(doc, "c").kind == Kind::kNull);
  CHECK(At(doc, "d").kind == Kind::kSeq);
  CHECK(At(doc, "e").kind == Kind::kMap);
  CHECK(At(doc, "f").scalar == "a#b");
  CHECK(MustParse("").kind == Kind::kNull);
  CHECK(MustParse("# only a comment\n").kind == Kind::kNull);
  CHECK(At(MustParse("a: 1\r\nb: 2\r\n"), "b").scalar == "2");
}

TEST_CASE("what kubectl never writes is refused with its line and column") {
  CHECK_THAT(Refusal("a: &x 1\n"), Contains("line 1 column 4") && Contains("anchors"));
  CHECK_THAT(Refusal("a: 1\nb: *x\n"), Contains("line 2 column 4") && Contains("aliases"));
  CHECK_THAT(Refusal("a: !!str 1\n"), Contains("tags"));
  CHECK_THAT(Refusal("a: |\n  text\n"), Contains("block scalars"));
  CHECK_THAT(Refusal("a: >\n  text\n"), Contains("block scalars"));
  CHECK_THAT(Refusal("a: [1, 2]\n"), Contains("flow collections"));
  CHECK_THAT(Refusal("a: {b: 1}\n"), Contains("flow collections"));
  CHECK_THAT(Refusal("a:\n\tb: 1\n"), Contains("line 2 column 1") && Contains("tab"));
  CHECK_THAT(Refusal("a: 1\na: 2\n"), Contains("line 2") && Contains("\"a\" appears twice"));
  CHECK_THAT(Refusal("a: 1\n---\nb: 2\n"), Contains("line 2") && Contains("second document"));
  CHECK_THAT(Refusal("%YAML 1.2\na: 1\n"), Contains("directive"));
  CHECK_THAT(Refusal("? a\n: b\n"), Contains("line 1 column 1"));
  CHECK_THAT(Refusal("a: \"open\n"), Contains("line 1 column 4") && Contains("closing quote"));
  CHECK_THAT(Refusal("a: \"\\q\"\n"), Contains("unknown escape"));
  CHECK_THAT(Refusal("a: b: c\n"), Contains("line 1 column 5") && Contains("plain value"));
  CHECK_THAT(Refusal("a: 1\n  b: 2\n"), Contains("line 2"));
  CHECK_THAT(Refusal("a:\n  b: 1\n c: 2\n"), Contains("line 3"));
  CHECK_THAT(Refusal("just a scalar\n"), Contains("not a mapping or a sequence"));
  CHECK_THAT(Refusal("a: 'x' y\n"), Contains("unexpected text"));
  CHECK_THAT(Refusal("a: x\x01\n"), Contains("line 1 column 5") && Contains("control"));
  CHECK_THAT(Refusal("a: \xff\n"), Contains("UTF-8"));
  CHECK_THAT(Refusal("a: - b\n"), Contains("own"));
  CHECK_THAT(Refusal("a:\n- b\n- c\n d: 1\n"), Contains("line 4"));
}

TEST_CASE("deep nesting is refused instead of exhausting the stack") {
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += std::string(static_cast<size_t>(i), ' ') + "a:\n";
  CHECK_THAT(Refusal(deep), Contains("nested too deeply"));
  CHECK_THAT(Refusal(std::string(200, '[') + std::string(200, ']')), Contains("line 1"));
  CHECK_THAT(Refusal("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}"),
             Contains("nested too deeply"));
}

TEST_CASE("JSON documents parse and their errors name line and column") {
  const DocNode doc = MustParse("\n{\"a\": {\"b\": [1, true, null, \"x\"]}, \"c\": {}}");
  const DocNode& b = At(At(doc, "a"), "b");
  REQUIRE(b.items.size() == 4);
  CHECK(b.items[0].scalar == "1");
  CHECK(b.items[1].scalar == "true");
  CHECK_FALSE(b.items[1].quoted);
  CHECK(b.items[2].kind == Kind::kNull);
  CHECK(b.items[3].quoted);
  CHECK_THAT(Refusal("{\n  \"a\": 1,\n  \"b\" 2}"), Contains("line 3 column"));
  CHECK_THAT(Refusal("{\"a\": 1, \"a\": 2}"), Contains("appears twice"));
}

TEST_CASE("a tree written as JSON reads back the same") {
  const DocNode doc = MustParse("a:\n- b: 'x y'\n  c: ~\n- [ ]\nd: \"\\u00e9\"\n");
  const std::string json = ToJson(doc);
  CHECK(json == R"({"a":[{"b":"x y","c":null},[]],"d":"é"})");
  StatusOr<DocNode> again = ParseJson(json);
  REQUIRE(again.ok());
  CHECK(ToJson(*again) == json);
}

}  // namespace
}  // namespace qrm::kube
