// AdmissionReview v1: decoding every request field, errors naming the field, and the answer's
// Go-exact encoding.
#include "cluster/webhook/admission_review.h"

#include <catch2/catch.hpp>

#include "checkpoint/base64.h"
#include "testing/temp_dir.h"

namespace qrm::webhook {
namespace {

std::string Golden(const std::string& name) {
  return testing::ReadFile(std::string(QRM_WEBHOOK_GOLDEN) + "/" + name);
}

std::string Refused(const std::string& json) {
  auto review = DecodeAdmissionReview(json);
  REQUIRE_FALSE(review.ok());
  CHECK(review.status().code() == StatusCode::kInvalidArgument);
  return review.status().message();
}

TEST_CASE("AdmissionReview: every request field of a pod create is read") {
  auto review = DecodeAdmissionReview(Golden("plugin_resources_request.json"));
  REQUIRE(review.ok());
  CHECK(review->api_version == "admission.k8s.io/v1");
  CHECK(review->kind == "AdmissionReview");
  REQUIRE(review->request);
  const AdmissionRequest& r = *review->request;
  CHECK(r.uid == "705ab4f5-6393-11e8-b7cc-42010a800002");
  CHECK(r.kind.group.empty());
  CHECK(r.kind.version == "v1");
  CHECK(r.kind.kind == "Pod");
  CHECK(r.resource.resource == "pods");
  CHECK(r.sub_resource.empty());
  REQUIRE(r.request_kind);
  CHECK(r.request_kind->kind == "Pod");
  REQUIRE(r.request_resource);
  CHECK(r.request_resource->resource == "pods");
  CHECK(r.name.empty());
  CHECK(r.namespace_ == "default");
  CHECK(r.operation == "CREATE");
  CHECK(r.user_info.username == "system:serviceaccount:kube-system:replicaset-controller");
  CHECK(r.user_info.uid == "0d3e6b1c-8f0a-4c55-9a37-1f7c2b8e4d10");
  CHECK(r.user_info.groups.size() == 3);
  CHECK(r.user_info.extra.at("authentication.kubernetes.io/credential-id").size() == 1);
  CHECK_THAT(r.object, Catch::StartsWith("{\"kind\":\"Pod\""));
  CHECK(r.old_object.empty());  // null on a create
  REQUIRE(r.dry_run);
  CHECK_FALSE(*r.dry_run);
  CHECK(r.options == R"({"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"})");
}

TEST_CASE("AdmissionReview: an update carries its name and old object") {
  auto review = DecodeAdmissionReview(Golden("update_request.json"));
  REQUIRE(review.ok());
  CHECK(review->request->operation == "UPDATE");
  CHECK(review->request->name == "nic-app-7d9f8c6b5-x2x7k");
  CHECK_THAT(review->request->old_object, Catch::Contains("canary"));
}

TEST_CASE("AdmissionReview: absent and null fields are zero values") {
  auto review = DecodeAdmissionReview(
      R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview",)"
      R"("request":{"uid":"u","operation":"DELETE","userInfo":null,"dryRun":null,"extra":1}})");
  REQUIRE(review.ok());
  CHECK(review->api_version == "admission.k8s.io/v1beta1");
  CHECK(review->request->operation == "DELETE");
  CHECK_FALSE(review->request->dry_run);
  CHECK_FALSE(review->request->request_kind);
  CHECK(review->request->object.empty());
}

TEST_CASE("AdmissionReview: bad input is refused naming the field and value") {
  const std::string head = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)";
  CHECK_THAT(Refused("{"), Catch::Contains("not JSON"));
  CHECK_THAT(Refused("[]"), Catch::Contains("AdmissionReview: expected an object"));
  CHECK_THAT(Refused(R"({"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview"})"),
             Catch::Contains("apiVersion: \"admission.k8s.io/v2\""));
  CHECK_THAT(Refused(R"({"apiVersion":"admission.k8s.io/v1","kind":"Review"})"),
             Catch::Contains("kind: \"Review\""));
  CHECK_THAT(Refused(head + "\"request\":null}"), Catch::Contains("request: missing"));
  CHECK_THAT(Refused(head + R"("request":{"operation":"CREATE"}})"),
             Catch::Contains("request.uid: missing"));
  CHECK_THAT(Refused(head + R"("request":{"uid":7}})"),
             Catch::Contains("request.uid: expected a string, got 7"));
  CHECK_THAT(Refused(head + R"("request":{"uid":"u","operation":"PATCH"}})"),
             Catch::Contains("request.operation: \"PATCH\""));
  CHECK_THAT(Refused(head + R"("request":{"uid":"u","operation":"CREATE","kind":{"group":1}}})"),
             Catch::Contains("request.kind.group: expected a string, got 1"));
  CHECK_THAT(
      Refused(head + R"("request":{"uid":"u","operation":"CREATE","userInfo":{"groups":[1]}}})"),
      Catch::Contains("request.userInfo.groups[0]"));
  CHECK_THAT(
      Refused(head +
              R"("request":{"uid":"u","operation":"CREATE","userInfo":{"extra":{"a":"b"}}}})"),
      Catch::Contains("request.userInfo.extra[\"a\"]: expected an array"));
  CHECK_THAT(Refused(head + R"("request":{"uid":"u","operation":"CREATE","dryRun":"yes"}})"),
             Catch::Contains("request.dryRun: expected true or false"));
}

TEST_CASE("AdmissionReview: a response is written as Go writes it") {
  AdmissionReview review{"admission.k8s.io/v1", "AdmissionReview", std::nullopt,
                         AdmissionResponse{}};
  review.response->uid = "u1";
  CHECK(EncodeAdmissionReview(review) ==
        R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1",)"
        R"("response":{"uid":"u1","allowed":false}})");
  review.response->allowed = true;
  review.response->patch = "[]";
  review.response->audit_annotations = {{"b", "2"}, {"a", "1"}};
  review.response->warnings = {"w \"1\""};
  review.response->status = ApiStatus{"Success", "", "", 0};
  CHECK(EncodeAdmissionReview(review) ==
        R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1",)"
        R"("response":{"uid":"u1","allowed":true,"status":{"metadata":{},"status":"Success"},)"
        R"("patch":"W10=","patchType":"JSONPatch","auditAnnotations":{"a":"1","b":"2"},)"
        R"("warnings":["w \"1\""]}})");
}

TEST_CASE("AdmissionReview: base64 pads as Go's encoding of a byte slice does") {
  CHECK(checkpoint::Base64Encode("").empty());
  CHECK(checkpoint::Base64Encode("f") == "Zg==");
  CHECK(checkpoint::Base64Encode("fo") == "Zm8=");
  CHECK(checkpoint::Base64Encode("foo") == "Zm9v");
  CHECK(checkpoint::Base64Encode("foob") == "Zm9vYg==");
  CHECK(checkpoint::Base64Encode(std::string("\xff\xfe\x00", 3)) == "//4A");
}

}  // namespace
}  // namespace qrm::webhook
