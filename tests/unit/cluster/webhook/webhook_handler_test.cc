// The webhook's HTTP answers: the golden reviews byte for byte, and 400 for what it cannot read.
#include "cluster/webhook/webhook_handler.h"

#include <catch2/catch.hpp>

#include "testing/temp_dir.h"

namespace qrm::webhook {
namespace {

std::string Golden(const std::string& name) {
  return testing::ReadFile(std::string(QRM_WEBHOOK_GOLDEN) + "/" + name);
}

WebhookConfig GoldenConfig() {
  WebhookConfig config;
  config.plugin_resources = {"example.com/widget"};
  return config;
}

TEST_CASE("webhook handler: the golden reviews are answered byte for byte") {
  for (const char* name : {"plugin_resources", "reclaimed", "conflict", "update"}) {
    INFO(name);
    http::Response r = ServeAdmission(GoldenConfig(), Golden(std::string(name) + "_request.json"));
    CHECK(r.status == 200);
    CHECK(r.content_type == "application/json");
    CHECK(r.body + "\n" == Golden(std::string(name) + "_response.json"));
  }
}

TEST_CASE("webhook handler: an unreadable review is a 400 naming the field") {
  http::Response r = ServeAdmission({}, R"({"apiVersion":"admission.k8s.io/v1"})");
  CHECK(r.status == 400);
  CHECK_THAT(r.body, Catch::Contains("kind"));
}

TEST_CASE("webhook handler: a pod that cannot be read is refused with BadRequest") {
  http::Response r = ServeAdmission(
      {}, R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u",)"
          R"("resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE",)"
          R"("object":{"metadata":{},"spec":{"containers":"x"}}}})");
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains(R"("allowed":false)") &&
                         Catch::Contains("request.object.spec.containers: expected an array") &&
                         Catch::Contains(R"("reason":"BadRequest","code":400)"));
}

TEST_CASE("webhook handler: v1beta1 is echoed and other resources are allowed untouched") {
  http::Response r = ServeAdmission(
      {}, R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{)"
          R"("uid":"u2","resource":{"group":"apps","version":"v1","resource":"deployments"},)"
          R"("operation":"CREATE","object":{}}})");
  CHECK(r.body == R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1",)"
                  R"("response":{"uid":"u2","allowed":true}})");
}

TEST_CASE("webhook handler: the routes take POST on the mutate path") {
  auto routes = WebhookRoutes({});
  REQUIRE(routes.count(kMutatePodsPath) == 1);
  CHECK(routes.at(kMutatePodsPath).methods == std::vector<std::string>{"POST"});
  http::Request request{"POST", kMutatePodsPath, "application/json", "{}"};
  CHECK(routes.at(kMutatePodsPath).handler(request).status == 400);
}

}  // namespace
}  // namespace qrm::webhook
