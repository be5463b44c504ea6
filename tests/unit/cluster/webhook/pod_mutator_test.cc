// The pod mutation: plugin resources to qrm.io/resources.<container>, the QoS level from
// limits, agreeing annotations left alone and contradicting ones refused.
#include "cluster/webhook/pod_mutator.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cluster/kube/json_pointer.h"
#include "cluster/webhook/json_patch.h"

namespace qrm::webhook {
namespace {

// A pod with one container "main" whose limits are `limits` (a JSON object's members) and,
// when given, these annotations and labels.
std::string Pod(const std::string& limits, const std::string& annotations = "",
                const std::string& labels = "") {
  std::string metadata = R"("name":"p","namespace":"default")";
  if (!annotations.empty()) metadata += R"(,"annotations":{)" + annotations + "}";
  if (!labels.empty()) metadata += R"(,"labels":{)" + labels + "}";
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{)" + metadata +
         R"(},"spec":{"containers":[{"name":"main","resources":{"limits":{)" + limits + "}}}]}}";
}

PodMutation Mutate(const std::string& pod, const WebhookConfig& config = {}) {
  auto m = MutatePod(config, pod);
  REQUIRE(m.ok());
  return *m;
}

std::string Patch(const PodMutation& m) {
  return EncodePatch(m.patch);
}

TEST_CASE("pod mutator: no plugin resource and no reclaimed resource means no patch") {
  PodMutation m = Mutate(Pod(R"("cpu":"2","memory":"1Gi","nvidia.com/gpu":"1")"));
  CHECK(m.patch.empty());
  CHECK_FALSE(m.refusal);
  CHECK(m.warnings.empty());
}

TEST_CASE("pod mutator: plugin resources become the container's annotation") {
  PodMutation m = Mutate(Pod(R"("cpu":"2","qrm.io/nic":"1","qrm.io/nic-bandwidth":"1500m")"));
  CHECK(Patch(m) == R"([{"op":"add","path":"/metadata/annotations","value":{}},)"
                    R"({"op":"add","path":"/metadata/annotations/qrm.io~1resources.main",)"
                    R"("value":"{\"qrm.io/nic\":1,\"qrm.io/nic-bandwidth\":\"1500m\"}"}])");
  CHECK(m.written == std::vector<std::string>{"qrm.io/resources.main"});
}

TEST_CASE("pod mutator: configured names and prefixes choose the plugin resources") {
  WebhookConfig config;
  config.plugin_resources = {"nvidia.com/gpu"};
  config.plugin_resource_prefixes = {"example.com/"};
  PodMutation m =
      Mutate(Pod(R"("nvidia.com/gpu":"2","example.com/widget":"3","qrm.io/nic":"1")", R"("a":"b")"),
             config);
  CHECK(Patch(m) == R"([{"op":"add","path":"/metadata/annotations/qrm.io~1resources.main",)"
                    R"("value":"{\"example.com/widget\":3,\"nvidia.com/gpu\":2}"}])");
}

TEST_CASE("pod mutator: an agreeing annotation is left alone") {
  // Same amounts written differently: a number, a quantity string, another unit.
  CHECK(
      Mutate(
          Pod(R"("qrm.io/nic":"1","qrm.io/nic-bandwidth":"1k")",
              R"("qrm.io/resources.main":"{\"qrm.io/nic\":1,\"qrm.io/nic-bandwidth\":\"1000\"}")"))
          .patch.empty());
  CHECK(Mutate(Pod(R"("qrm.io/nic":"2")", R"("qrm.io/resources":"{\"qrm.io/nic\":\"2\"}")"))
            .patch.empty());
}

TEST_CASE("pod mutator: a contradicting annotation is refused naming both values") {
  PodMutation m = Mutate(Pod(R"("qrm.io/nic":"1")", R"("qrm.io/resources":"{\"qrm.io/nic\": 2}")"));
  REQUIRE(m.refusal);
  CHECK_THAT(*m.refusal, Catch::Contains("qrm.io/resources says \"qrm.io/nic\": 2") &&
                             Catch::Contains("container \"main\" limits qrm.io/nic: 1"));
  CHECK(m.patch.empty());
  // The container's own annotation is the one the shim applies, so it is the one checked.
  PodMutation own =
      Mutate(Pod(R"("qrm.io/nic":"1")", R"("qrm.io/resources":"{\"qrm.io/nic\":1}",)"
                                        R"("qrm.io/resources.main":"{\"qrm.io/nic\":\"3\"}")"));
  REQUIRE(own.refusal);
  CHECK_THAT(*own.refusal, Catch::Contains("qrm.io/resources.main says \"qrm.io/nic\": \"3\""));
}

TEST_CASE("pod mutator: an annotation that is not a JSON object is refused") {
  PodMutation m = Mutate(Pod(R"("qrm.io/nic":"1")", R"("qrm.io/resources.main":"nic=1")"));
  REQUIRE(m.refusal);
  CHECK_THAT(*m.refusal, Catch::Contains("qrm.io/resources.main=\"nic=1\""));
}

TEST_CASE("pod mutator: missing entries are merged into the container's annotation") {
  // Its own annotation lacks one: replaced with both.
  PodMutation own =
      Mutate(Pod(R"("qrm.io/nic":"1")", R"("qrm.io/resources.main":"{\"example.com/accel\":2}")"));
  CHECK(Patch(own) == R"([{"op":"replace","path":"/metadata/annotations/qrm.io~1resources.main",)"
                      R"("value":"{\"example.com/accel\":2,\"qrm.io/nic\":1}"}])");
  // Only the pod-wide one: the container gets its own, keeping the pod-wide entries, because
  // the shim applies the first annotation it finds and no longer the pod-wide one.
  PodMutation wide =
      Mutate(Pod(R"("qrm.io/nic":"1")", R"("qrm.io/resources":"{\"example.com/accel\":\"2\"}")"));
  CHECK(Patch(wide) == R"([{"op":"add","path":"/metadata/annotations/qrm.io~1resources.main",)"
                       R"("value":"{\"example.com/accel\":\"2\",\"qrm.io/nic\":1}"}])");
}

TEST_CASE("pod mutator: init containers get their own annotation") {
  const std::string pod =
      R"({"metadata":{"generateName":"j-"},"spec":{)"
      R"("initContainers":[{"name":"setup","resources":{"limits":{"qrm.io/nic":"1"}}}],)"
      R"("containers":[{"name":"run"}]}})";
  PodMutation m = Mutate(pod);
  CHECK(m.written == std::vector<std::string>{"qrm.io/resources.setup"});
}

TEST_CASE("pod mutator: reclaimed resources make the pod reclaimed_cores") {
  for (const char* name : {"resource.katalyst.kubewharf.io/reclaimed_millicpu",
                           "resource.katalyst.kubewharf.io/reclaimed_memory",
                           "kubernetes.io/batch-cpu", "kubernetes.io/batch-memory"}) {
    PodMutation m = Mutate(Pod(fmt::format(R"("{}":"2k")", name), R"("a":"b")"));
    CHECK(Patch(m) ==
          R"([{"op":"add","path":"/metadata/annotations/katalyst.kubewharf.io~1qos_level",)"
          R"("value":"reclaimed_cores"}])");
  }
  // Written by hand already: nothing to do.
  CHECK(Mutate(Pod(R"("kubernetes.io/batch-cpu":"1k")",
                   R"("katalyst.kubewharf.io/qos_level":"reclaimed_cores")"))
            .patch.empty());
}

TEST_CASE("pod mutator: a level contradicting reclaimed resources is refused") {
  PodMutation m = Mutate(Pod(R"("resource.katalyst.kubewharf.io/reclaimed_millicpu":"4k")",
                             R"("katalyst.kubewharf.io/qos_level":"dedicated_cores")"));
  REQUIRE(m.refusal);
  CHECK_THAT(*m.refusal,
             Catch::Contains("katalyst.kubewharf.io/qos_level=\"dedicated_cores\"") &&
                 Catch::Contains("resource.katalyst.kubewharf.io/reclaimed_millicpu: 4k") &&
                 Catch::Contains("reclaimed_cores"));
}

TEST_CASE("pod mutator: reclaimed and native CPU together are left to the author") {
  PodMutation m = Mutate(Pod(R"("cpu":"1","kubernetes.io/batch-cpu":"1k")"));
  CHECK(m.patch.empty());
  REQUIRE(m.warnings.size() == 1);
  CHECK_THAT(m.warnings[0], Catch::Contains("not derived") && Catch::Contains("native cpu"));
}

TEST_CASE("pod mutator: a pod role decides the level and the webhook only warns") {
  PodMutation m = Mutate(
      Pod(R"("kubernetes.io/batch-cpu":"1k")", "", R"("katalyst.kubewharf.io/pod_role":"ETL")"));
  CHECK(m.patch.empty());
  REQUIRE(m.warnings.size() == 1);
  CHECK_THAT(m.warnings[0], Catch::Contains("pod_role=\"ETL\""));
}

TEST_CASE("pod mutator: Guaranteed whole-core pods are dedicated_cores only when opted in") {
  const std::string guaranteed = Pod(R"("cpu":"4","memory":"8Gi")");
  CHECK(Mutate(guaranteed).patch.empty());
  WebhookConfig opt_in;
  opt_in.guaranteed_whole_cores_dedicated = true;
  CHECK(Patch(Mutate(guaranteed, opt_in)) ==
        R"([{"op":"add","path":"/metadata/annotations","value":{}},)"
        R"({"op":"add","path":"/metadata/annotations/katalyst.kubewharf.io~1qos_level",)"
        R"("value":"dedicated_cores"}])");
  CHECK(Mutate(Pod(R"("cpu":"3500m","memory":"8Gi")"), opt_in).patch.empty());
  CHECK(Mutate(Pod(R"("cpu":"4")"), opt_in).patch.empty());  // Burstable: no memory limit
  // A hand-written level overrides the opt-in default.
  PodMutation shared = Mutate(
      Pod(R"("cpu":"4","memory":"8Gi")", R"("katalyst.kubewharf.io/qos_level":"shared_cores")"),
      opt_in);
  CHECK(shared.patch.empty());
  CHECK_FALSE(shared.refusal);
}

TEST_CASE("pod mutator: an unreadable pod is an error naming the field") {
  auto missing = MutatePod({}, R"({"metadata":{},"spec":{}})");
  CHECK_THAT(missing.status().message(), Catch::Contains("object.spec.containers: missing"));
  auto bad_quantity = MutatePod({}, Pod(R"("qrm.io/nic":"one")"));
  CHECK_THAT(bad_quantity.status().message(),
             Catch::Contains("object.spec.containers[0].resources.limits[\"qrm.io/nic\"]"));
  auto unnamed = MutatePod({}, R"({"metadata":{},"spec":{"containers":[{}]}})");
  CHECK_THAT(unnamed.status().message(), Catch::Contains("object.spec.containers[0].name"));
  auto annotation =
      MutatePod({}, R"({"metadata":{"annotations":{"a":1}},"spec":{"containers":[]}})");
  CHECK_THAT(annotation.status().message(),
             Catch::Contains("object.metadata.annotations[\"a\"]: expected a string"));
}

TEST_CASE("JSON Patch: pointer tokens escape tilde and slash") {
  CHECK(kube::EscapeJsonPointer("a/b~c") == "a~1b~0c");
  CHECK(kube::EscapeJsonPointer("~1") == "~01");
  CHECK(AnnotationPath("qrm.io/resources.main") == "/metadata/annotations/qrm.io~1resources.main");
}

TEST_CASE("webhook config: native and overlapping names are refused") {
  WebhookConfig config;
  CHECK(ValidateWebhookConfig(config).ok());
  config.plugin_resources = {"hugepages-2Mi"};
  CHECK_THAT(ValidateWebhookConfig(config).message(), Catch::Contains("\"hugepages-2Mi\""));
  config.plugin_resources = {"kubernetes.io/batch-cpu"};
  CHECK_THAT(ValidateWebhookConfig(config).message(), Catch::Contains("reclaimed_resources"));
  config.plugin_resources = {};
  config.plugin_resource_prefixes = {""};
  CHECK_FALSE(ValidateWebhookConfig(config).ok());
  CHECK_FALSE(IsPluginResource(WebhookConfig{}, "cpu"));
  CHECK_FALSE(IsPluginResource(WebhookConfig{}, "ephemeral-storage"));
  CHECK(IsPluginResource(WebhookConfig{}, "qrm.io/nic"));
}

}  // namespace
}  // namespace qrm::webhook
