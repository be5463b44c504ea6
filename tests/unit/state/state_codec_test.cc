// The host checkpoint's `data` format (qrm/state/README.md): round trip and the checks on
// content that passed the checksum.
#include "qrm/state/state_codec.h"

#include <string>

#include <catch2/catch.hpp>

#include "checkpoint/base64.h"
#include "checkpoint/canonical_json.h"
#include "tests/unit/state/state_test_util.h"

namespace qrm::host {
namespace {

using testutil::SampleState;

rapidjson::Document Encode(const PodResources& state) {
  rapidjson::Document doc;
  REQUIRE(EncodePodResources(state, doc).ok());
  return doc;
}

rapidjson::Document Json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

std::string B64(const google::protobuf::MessageLite& m) {
  return checkpoint::Base64Encode(DeterministicBytes(m));
}

TEST_CASE("pod resources survive encode and decode", "[state][codec]") {
  const PodResources state = SampleState();
  const rapidjson::Document doc = Encode(state);
  // Storable as a checkpoint: no floats anywhere (the doubles live inside protobuf).
  REQUIRE(checkpoint::CanonicalJson(doc).ok());
  StatusOr<PodResources> back = DecodePodResources(doc);
  REQUIRE(back.ok());
  CHECK((*back == state));
  CHECK((*back)["uid-b"].containers["pg"].resources["nic"].allocated_quantity() == 0.5);
}

TEST_CASE("the encoding has the documented shape and is deterministic", "[state][codec]") {
  const PodResources state = SampleState();
  const rapidjson::Document doc = Encode(state);
  const rapidjson::Value& a = doc["pods"]["uid-a"];
  CHECK(std::string(a["name"].GetString()) == "web");
  CHECK(std::string(a["namespace"].GetString()) == "default");
  CHECK(std::string(a["pod_affinity"].GetString()) == "0-1");
  CHECK_FALSE(doc["pods"]["uid-b"].HasMember("pod_affinity"));
  const rapidjson::Value& main = a["containers"]["main"];
  CHECK(std::string(main["request"].GetString()) ==
        B64(state.at("uid-a").containers.at("main").request));
  CHECK(std::string(main["resources"]["cpu"].GetString()) ==
        B64(state.at("uid-a").containers.at("main").resources.at("cpu")));
  // An empty message is an empty string, still a valid entry.
  CHECK(doc["pods"]["uid-c"]["containers"]["sidecar"]["resources"].ObjectEmpty());

  // Equal states give byte-identical checkpoints, whatever the protobuf map insertion order.
  PodResources reordered = state;
  auto& envs = *reordered["uid-a"].containers["main"].resources["cpu"].mutable_envs();
  envs.clear();
  envs["OMP_NUM_THREADS"] = "2";
  envs["QRM_CPUS"] = "2-3";
  CHECK(*checkpoint::CanonicalJson(Encode(reordered)) == *checkpoint::CanonicalJson(doc));
}

TEST_CASE("an empty state is an empty pods object", "[state][codec]") {
  CHECK(*checkpoint::CanonicalJson(Encode({})) == R"({"pods":{}})");
  StatusOr<PodResources> back = DecodePodResources(Json(R"({"pods":{}})"));
  REQUIRE(back.ok());
  CHECK(back->empty());
}

TEST_CASE("invalid content is data loss naming where it is", "[state][codec]") {
  const std::string req = B64(pb::ResourceRequest());
  struct Case {
    const char* what;
    std::string json;
    std::string where;
  };
  const Case cases[] = {
      {"bad base64",
       R"({"pods":{"u1":{"name":"p","namespace":"n","containers":{"c1":{"request":")" + req +
           R"(","resources":{"cpu":"not*base64"}}}}}})",
       R"(pods["u1"].containers["c1"].resources["cpu"])"},
      {"bad request base64",
       R"({"pods":{"u1":{"name":"p","namespace":"n","containers":{"c1":{"request":"@@@@","resources":{}}}}}})",
       R"(pods["u1"].containers["c1"].request)"},
      {"unparsable protobuf",
       // 0xff 0xff: field 31 with wire type 7, which does not exist.
       R"({"pods":{"u1":{"name":"p","namespace":"n","containers":{"c1":{"request":")" + req +
           R"(","resources":{"mem":"//8="}}}}}})",
       R"(pods["u1"].containers["c1"].resources["mem"])"},
      {"resource not a string",
       R"({"pods":{"u1":{"name":"p","namespace":"n","containers":{"c1":{"request":")" + req +
           R"(","resources":{"cpu":7}}}}}})",
       R"(pods["u1"].containers["c1"].resources["cpu"])"},
      {"bad pod affinity",
       R"({"pods":{"u1":{"name":"p","namespace":"n","pod_affinity":"1-0","containers":{}}}})",
       R"(pods["u1"].pod_affinity)"},
      {"empty pod affinity",
       R"({"pods":{"u1":{"name":"p","namespace":"n","pod_affinity":"","containers":{}}}})",
       R"(pods["u1"].pod_affinity)"},
      {"missing namespace", R"({"pods":{"u1":{"name":"p","containers":{}}}})",
       R"(pods["u1"]: missing member "namespace")"},
      {"missing resources",
       R"({"pods":{"u1":{"name":"p","namespace":"n","containers":{"c1":{"request":""}}}}})",
       R"(pods["u1"].containers["c1"]: missing member "resources")"},
      {"unknown member", R"({"pods":{"u1":{"name":"p","namespace":"n","containers":{},"x":1}}})",
       R"(pods["u1"]: unexpected member "x")"},
      {"pods not an object", R"({"pods":[]})", "pods: not a JSON object"},
      {"no pods", R"({})", R"(data: missing member "pods")"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    StatusOr<PodResources> got = DecodePodResources(Json(c.json));
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == StatusCode::kDataLoss);
    CHECK_THAT(got.status().message(), Catch::Contains(c.where));
  }
}

}  // namespace
}  // namespace qrm::host
