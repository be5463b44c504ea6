// The DNS-1123 name rules of apimachinery's validation, as the API server applies them.
#include "cluster/kube/kube_names.h"

#include <string>

#include <catch2/catch.hpp>

namespace qrm::kube {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("DNS-1123 labels are 1 to 63 lowercase alphanumerics and dashes") {
  CHECK(IsDnsLabel("kube-system"));
  CHECK(IsDnsLabel("a"));
  CHECK(IsDnsLabel(std::string(63, 'a')));
  CHECK_FALSE(IsDnsLabel(std::string(64, 'a')));
  CHECK_FALSE(IsDnsLabel(""));
  CHECK_FALSE(IsDnsLabel("-web"));
  CHECK_FALSE(IsDnsLabel("web-"));
  CHECK_FALSE(IsDnsLabel("Web"));
  CHECK_FALSE(IsDnsLabel("web.1"));
}

// Upstream's subdomain regex has no per-part limit: only the whole name's 253.
TEST_CASE("DNS-1123 subdomains are dot-separated label shapes of at most 253") {
  CHECK(IsDnsSubdomain("example.com"));
  CHECK(IsDnsSubdomain("web-1"));
  CHECK(IsDnsSubdomain(std::string(100, 'a') + ".io"));
  CHECK(IsDnsSubdomain(std::string(253, 'a')));
  CHECK_FALSE(IsDnsSubdomain(std::string(254, 'a')));
  CHECK_FALSE(IsDnsSubdomain("a..b"));
  CHECK_FALSE(IsDnsSubdomain(".a"));
  CHECK_FALSE(IsDnsSubdomain("a."));
  CHECK_FALSE(IsDnsSubdomain("a.-b"));
  CHECK_FALSE(IsDnsSubdomain("a/b"));
  CHECK_FALSE(IsDnsSubdomain(""));
}

TEST_CASE("the validators name the field and the value") {
  CHECK(ValidateNamespace("default").ok());
  CHECK_THAT(ValidateNamespace("Default", "pod namespace").message(),
             Contains("pod namespace: \"Default\": not a DNS-1123 label"));
  CHECK(ValidateObjectName("web-1.shop").ok());
  CHECK_THAT(ValidateObjectName("web/1").message(),
             Contains("name: \"web/1\": not a DNS-1123 subdomain"));
}

}  // namespace
}  // namespace qrm::kube
