// Env and annotation rules: every refusal names the resource, the key and why.
#include "qrm/apply/env_annotation_rules.h"

#include <catch2/catch.hpp>

namespace qrm::apply {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("env names follow the Kubernetes rule", "[apply][rules]") {
  CHECK(CheckEnvVar("cpu", "CPUSET_CPUS", "0-3").ok());
  CHECK(CheckEnvVar("cpu", "my.var-1", "").ok());
  CHECK(CheckEnvVar("cpu", "_X", "y").ok());
  struct Case {
    std::string key, value, expected;
  };
  const std::vector<Case> cases = {
      {"1ABC", "x", R"x(resource "cpu": env key "1ABC": is not a valid variable name)x"},
      {"A B", "x", R"x(resource "cpu": env key "A B": is not a valid variable name)x"},
      {"A$(rm)", "x", "resource \"cpu\": env key \"A$(rm)\": is not a valid variable name"},
      {"A=B", "x", R"x(resource "cpu": env key "A=B": contains '=')x"},
      {"", "x", R"x(resource "cpu": env key "": is empty)x"},
  };
  for (const auto& c : cases) {
    INFO(c.key);
    const Status s = CheckEnvVar("cpu", c.key, c.value);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Contains(c.expected));
  }
}

TEST_CASE("env and annotation values have a size limit", "[apply][rules]") {
  CHECK(CheckEnvVar("nic", "BIG", std::string(kMaxEnvValueBytes, 'x')).ok());
  const Status env = CheckEnvVar("nic", "BIG", std::string(kMaxEnvValueBytes + 1, 'x'));
  CHECK(env.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(env.message(), Contains(R"x(resource "nic": env key "BIG": value of 32769 bytes)x"));
  CHECK_THAT(env.message(), Contains("limit of 32768 bytes"));

  CHECK(CheckAnnotation("nic", "qrm.io/x", std::string(kMaxAnnotationValueBytes, 'x')).ok());
  const Status ann =
      CheckAnnotation("nic", "qrm.io/x", std::string(kMaxAnnotationValueBytes + 1, 'x'));
  CHECK(ann.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(ann.message(),
             Contains(R"x(resource "nic": annotation key "qrm.io/x": value of 65537 bytes)x"));
}

TEST_CASE("annotation keys are qualified names", "[apply][rules]") {
  for (const char* good : {"qrm.io/qos-level", "note", "kubernetes.io/host-netns-path", "a_b.c"}) {
    INFO(good);
    CHECK(CheckAnnotation("cpu", good, "v").ok());
  }
  for (const char* bad : {"", "/x", "qrm.io/", "UPPER.io/x", "a/b/c", "-lead", "sp ace", "x\n"}) {
    INFO(bad);
    const Status s = CheckAnnotation("cpu", bad, "v");
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Contains("resource \"cpu\": annotation key"));
  }
}

}  // namespace
}  // namespace qrm::apply
