#include "qrm/topology/policy_names.h"

#include <catch2/catch.hpp>

namespace qrm::topology {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("ParsePolicy accepts the kubelet's policy names", "[topology][names]") {
  for (Policy policy :
       {Policy::kNone, Policy::kBestEffort, Policy::kRestricted, Policy::kSingleNumaNode}) {
    StatusOr<Policy> parsed = ParsePolicy(PolicyName(policy));
    REQUIRE(parsed.ok());
    CHECK(*parsed == policy);
  }
  CHECK(PolicyName(Policy::kBestEffort) == "best-effort");
  CHECK(PolicyName(Policy::kSingleNumaNode) == "single-numa-node");
}

TEST_CASE("ParsePolicy names the bad value", "[topology][names]") {
  for (const char* bad : {"", "Best-Effort", "single_numa_node", "strict", "none "}) {
    StatusOr<Policy> parsed = ParsePolicy(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(parsed.status().message(), Contains("\"" + std::string(bad) + "\""));
  }
}

TEST_CASE("ParseScope", "[topology][names]") {
  CHECK(*ParseScope("container") == Scope::kContainer);
  CHECK(*ParseScope("pod") == Scope::kPod);
  CHECK(ScopeName(Scope::kPod) == "pod");
  StatusOr<Scope> bad = ParseScope("node");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad.status().message(), Contains("\"node\""));
}

TEST_CASE("ParsePolicyOptions", "[topology][names]") {
  StatusOr<PolicyOptions> none = ParsePolicyOptions({});
  REQUIRE(none.ok());
  CHECK_FALSE(none->prefer_closest_numa_nodes);

  for (const char* yes : {"true", "1", "t", "T", "TRUE", "True"}) {
    StatusOr<PolicyOptions> on = ParsePolicyOptions({{"prefer-closest-numa-nodes", yes}});
    REQUIRE(on.ok());
    CHECK(on->prefer_closest_numa_nodes);
  }
  StatusOr<PolicyOptions> off = ParsePolicyOptions({{"prefer-closest-numa-nodes", "false"}});
  REQUIRE(off.ok());
  CHECK_FALSE(off->prefer_closest_numa_nodes);

  StatusOr<PolicyOptions> bad_value = ParsePolicyOptions({{"prefer-closest-numa-nodes", "yes"}});
  REQUIRE_FALSE(bad_value.ok());
  CHECK(bad_value.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad_value.status().message(), Contains("\"yes\""));
  CHECK_THAT(bad_value.status().message(), Contains("prefer-closest-numa-nodes"));

  StatusOr<PolicyOptions> unknown = ParsePolicyOptions({{"max-allowable-numa-nodes", "16"}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(unknown.status().message(), Contains("\"max-allowable-numa-nodes\""));
}

}  // namespace
}  // namespace qrm::topology
