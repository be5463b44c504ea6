// Skip rules: namespaces and the qrm.io/skip annotation.
#include "cri-shim/skip_rules.h"

#include <catch2/catch.hpp>

namespace qrm::shim {
namespace {

using Catch::Matchers::Contains;

PodInfo Pod(const std::string& ns, std::map<std::string, std::string> annotations = {}) {
  PodInfo pod;
  pod.uid = "uid-1";
  pod.name = "web";
  pod.ns = ns;
  pod.annotations = std::move(annotations);
  return pod;
}

TEST_CASE("Pods in configured namespaces are skipped, others are not", "[cri_shim][skip]") {
  const std::set<std::string> skip = {"kube-system", "monitoring"};
  CHECK(*ShouldSkip(Pod("kube-system"), skip));
  CHECK(*ShouldSkip(Pod("monitoring"), skip));
  CHECK_FALSE(*ShouldSkip(Pod("default"), skip));
  CHECK_FALSE(*ShouldSkip(Pod("kube-system"), {}));
}

TEST_CASE("The qrm.io/skip annotation opts a pod out", "[cri_shim][skip]") {
  CHECK(*ShouldSkip(Pod("default", {{"qrm.io/skip", "true"}}), {}));
  CHECK_FALSE(*ShouldSkip(Pod("default", {{"qrm.io/skip", "false"}}), {}));
  // "false" does not opt a pod of a skipped namespace back in.
  CHECK(*ShouldSkip(Pod("kube-system", {{"qrm.io/skip", "false"}}), {"kube-system"}));
}

TEST_CASE("A qrm.io/skip value other than true/false is an error naming it", "[cri_shim][skip]") {
  for (const char* bad : {"yes", "True", "1", ""}) {
    INFO(bad);
    auto s = ShouldSkip(Pod("default", {{"qrm.io/skip", bad}}), {});
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.status().message(),
               Contains(std::string("qrm.io/skip=\"") + bad + "\"") && Contains("default/web"));
  }
}

}  // namespace
}  // namespace qrm::shim
