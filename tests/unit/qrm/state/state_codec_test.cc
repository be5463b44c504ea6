// The `data` format of a pod's host checkpoint file (qrm/state/README.md): round trip and
// the checks on content that passed the checksum.
#include "qrm/state/state_codec.h"

#include <string>

#include <catch2/catch.hpp>

#include "checkpoint/base64.h"
#include "checkpoint/canonical_json.h"
#include "tests/unit/qrm/state/state_test_util.h"

namespace qrm::state {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using testutil::SampleState;

rapidjson::Document Encode(const PodAllocation& pod) {
  rapidjson::Document doc;
  REQUIRE(EncodePod(pod, doc).ok());
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

TEST_CASE("pods survive encode and decode", "[state][codec]") {
  for (const auto& [uid, pod] : SampleState()) {
    INFO(uid);
    const rapidjson::Document doc = Encode(*pod);
    // Storable as a checkpoint: no floats anywhere (the doubles live inside protobuf).
    REQUIRE(checkpoint::CanonicalJson(doc).ok());
    StatusOr<PodAllocation> back = DecodePod(doc);
    REQUIRE(back.ok());
    CHECK((*back == *pod));
    CHECK(back->uid == uid);
  }
  const rapidjson::Document doc = Encode(*SampleState().at("uid-b"));
  CHECK(DecodePod(doc)->containers.at("pg").resources.at("nic").allocated_quantity() == 0.5);
}

TEST_CASE("the encoding has the documented shape and is deterministic", "[state][codec]") {
  const PodResources state = SampleState();
  const PodAllocation& pod_a = *state.at("uid-a");
  const rapidjson::Document a = Encode(pod_a);
  CHECK(std::string(a["uid"].GetString()) == "uid-a");
  CHECK(std::string(a["name"].GetString()) == "web");
  CHECK(std::string(a["namespace"].GetString()) == "default");
  CHECK(std::string(a["pod_affinity"].GetString()) == "0-1");
  CHECK_FALSE(Encode(*state.at("uid-b")).HasMember("pod_affinity"));
  const rapidjson::Value& main = a["containers"]["main"];
  CHECK(std::string(main["request"].GetString()) == B64(pod_a.containers.at("main").request));
  CHECK(std::string(main["resources"]["cpu"].GetString()) ==
        B64(pod_a.containers.at("main").resources.at("cpu")));
  // An empty message is an empty string, still a valid entry.
  CHECK(Encode(*state.at("uid-c"))["containers"]["sidecar"]["resources"].ObjectEmpty());

  // Equal pods give byte-identical checkpoints, whatever the protobuf map insertion order.
  PodAllocation reordered = pod_a;
  auto& envs = *reordered.containers["main"].resources["cpu"].mutable_envs();
  envs.clear();
  envs["OMP_NUM_THREADS"] = "2";
  envs["QRM_CPUS"] = "2-3";
  CHECK(*checkpoint::CanonicalJson(Encode(reordered)) == *checkpoint::CanonicalJson(a));
}

TEST_CASE("the encoding takes allocation infos from the resource_bytes cache", "[state][codec]") {
  PodAllocation pod = *SampleState().at("uid-b");
  const std::string uncached = *checkpoint::CanonicalJson(Encode(pod));
  for (auto& [name, container] : pod.containers) CacheResourceBytes(container);
  CHECK(*checkpoint::CanonicalJson(Encode(pod)) == uncached);
  // The cache is what is written (the store keeps it equal to the messages).
  ContainerAllocation& pg = pod.containers.at("pg");
  pg.resource_bytes.at("nic") = DeterministicBytes(pg.resources.at("cpu"));
  const rapidjson::Document doc = Encode(pod);
  CHECK(std::string(doc["containers"]["pg"]["resources"]["nic"].GetString()) ==
        B64(pg.resources.at("cpu")));
}

TEST_CASE("SameAsStored compares with the stored side's cached bytes", "[state][codec]") {
  ContainerAllocation c = testutil::Container("u", "ns", "p", "c", 2);
  const pb::ResourceAllocationInfo same = c.resources.at("cpu");
  pb::ResourceAllocationInfo other = same;
  other.set_allocation_result("4-7");
  // Without a cache, both sides are serialized.
  CHECK(SameAsStored(c, "cpu", same));
  CHECK_FALSE(SameAsStored(c, "cpu", other));
  CHECK_FALSE(SameAsStored(c, "gpu", same));  // nothing stored
  CacheResourceBytes(c);
  CHECK(c.resource_bytes.size() == 2);
  CHECK(SameAsStored(c, "cpu", same));
  CHECK_FALSE(SameAsStored(c, "cpu", other));
  // Equality ignores the cache.
  ContainerAllocation uncached = c;
  uncached.resource_bytes.clear();
  CHECK((uncached == c));
}

TEST_CASE("invalid content is data loss naming where it is", "[state][codec]") {
  const std::string req = B64(pb::ResourceRequest());
  const std::string head = R"({"uid":"u1","name":"p","namespace":"n",)";
  struct Case {
    const char* what;
    std::string json;
    std::string where;
  };
  const Case cases[] = {
      {"bad base64",
       head + R"("containers":{"c1":{"request":")" + req +
           R"(","resources":{"cpu":"not*base64"}}}})",
       R"(pod.containers["c1"].resources["cpu"])"},
      {"bad request base64", head + R"("containers":{"c1":{"request":"@@@@","resources":{}}}})",
       R"(pod.containers["c1"].request)"},
      {"unparsable protobuf",
       // 0xff 0xff: field 31 with wire type 7, which does not exist.
       head + R"("containers":{"c1":{"request":")" + req + R"(","resources":{"mem":"//8="}}}})",
       R"(pod.containers["c1"].resources["mem"])"},
      {"resource not a string",
       head + R"("containers":{"c1":{"request":")" + req + R"(","resources":{"cpu":7}}}})",
       R"(pod.containers["c1"].resources["cpu"])"},
      {"bad pod affinity", head + R"("pod_affinity":"1-0","containers":{}})", "pod.pod_affinity"},
      {"empty pod affinity", head + R"("pod_affinity":"","containers":{}})", "pod.pod_affinity"},
      {"missing uid", R"({"name":"p","namespace":"n","containers":{}})",
       R"(pod: missing member "uid")"},
      {"uid not a string", R"({"uid":1,"name":"p","namespace":"n","containers":{}})",
       "pod.uid: not a string"},
      {"missing namespace", R"({"uid":"u1","name":"p","containers":{}})",
       R"(pod: missing member "namespace")"},
      {"missing resources", head + R"("containers":{"c1":{"request":""}}})",
       R"(pod.containers["c1"]: missing member "resources")"},
      {"unknown member", head + R"("containers":{},"x":1})", R"(pod: unexpected member "x")"},
      {"containers not an object", head + R"("containers":[]})",
       "pod.containers: not a JSON object"},
      {"the old whole-state shape", R"({"pods":{}})", R"(pod: unexpected member "pods")"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    StatusOr<PodAllocation> got = DecodePod(Json(c.json));
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == StatusCode::kDataLoss);
    CHECK_THAT(got.status().message(), Catch::Contains(c.where));
  }
}

}  // namespace
}  // namespace qrm::state
