// Merging several resources' allocations: property conflicts, env/annotation resolution,
// validation of keys, and ContainerUpdate equality.
#include "qrm/apply/container_update.h"

#include <catch2/catch.hpp>

#include "tests/unit/qrm/apply/apply_test_util.h"

namespace qrm::apply {
namespace {

using Catch::Matchers::Contains;
using testing::Alloc;
using testing::Allocations;

TEST_CASE("Resources setting different properties are merged", "[apply][merge]") {
  StatusOr<ContainerUpdate> u = BuildContainerUpdate({
      {"cpu", Alloc("CpusetCpus", "0-3")},
      {"memory", Alloc("CpusetMems", "0")},
      {"hugepages", Alloc("HugepageLimits", "2MB:4194304")},
      {"nic", Alloc("", "eth1", {{"NIC", "eth1"}}, {{"qrm/nic", "eth1"}})},
  });
  REQUIRE(u.ok());
  CHECK(u->owned == std::set<OciProperty>{OciProperty::kCpusetCpus, OciProperty::kCpusetMems,
                                          OciProperty::kHugepageLimits});
  CHECK(u->resources.cpuset_cpus() == "0-3");
  CHECK(u->resources.cpuset_mems() == "0");
  REQUIRE(u->resources.hugepage_limits_size() == 1);
  CHECK(u->envs == testing::Strings{{"NIC", "eth1"}});
  CHECK(u->annotations == testing::Strings{{"qrm/nic", "eth1"}});
  CHECK(u->conflicts.empty());
}

TEST_CASE("An empty oci_property_name contributes only envs and annotations", "[apply][merge]") {
  // allocation_result is not parsed: it is that plugin's own business.
  StatusOr<ContainerUpdate> u =
      BuildContainerUpdate({{"nic", Alloc("", "not a cpuset", {{"A", "1"}})}});
  REQUIRE(u.ok());
  CHECK(u->owned.empty());
  CHECK(u->envs.at("A") == "1");
  CHECK(BuildContainerUpdate({}).ok());
}

TEST_CASE("Two resources setting one property differently is an error naming both",
          "[apply][merge]") {
  StatusOr<ContainerUpdate> u = BuildContainerUpdate({
      {"cpu", Alloc("CpusetCpus", "0-3")},
      {"exclusive-cpu", Alloc("CpusetCpus", "4-7")},
  });
  REQUIRE_FALSE(u.ok());
  CHECK(u.status().code() == StatusCode::kInvalidArgument);
  CHECK(u.status().message() ==
        "conflicting CpusetCpus values: resource \"cpu\" sets \"0-3\", resource "
        "\"exclusive-cpu\" sets \"4-7\"");

  StatusOr<ContainerUpdate> quota = BuildContainerUpdate({
      {"a", Alloc("CpuQuota", "-1")},
      {"b", Alloc("CpuQuota", "0")},
  });
  REQUIRE_FALSE(quota.ok());
  CHECK_THAT(quota.status().message(), Contains("resource \"a\" sets \"-1\""));
  CHECK_THAT(quota.status().message(), Contains("resource \"b\" sets \"0\""));

  StatusOr<ContainerUpdate> unified = BuildContainerUpdate({
      {"a", Alloc("Unified", R"({"memory.high":"1"})")},
      {"b", Alloc("Unified", R"({"memory.high":"1","memory.max":"2"})")},
  });
  REQUIRE_FALSE(unified.ok());
  CHECK_THAT(unified.status().message(), Contains("conflicting Unified values"));
}

TEST_CASE("The same value from two resources is fine, in any equivalent spelling",
          "[apply][merge]") {
  StatusOr<ContainerUpdate> u = BuildContainerUpdate({
      {"a", Alloc("CpusetCpus", "0,1,2,3")},
      {"b", Alloc("CpusetCpus", "0-3")},
      {"c", Alloc("HugepageLimits", "2MB:1,1GB:0")},
      {"d", Alloc("HugepageLimits", "1GB:0,2MB:1")},
      {"e", Alloc("Unified", R"({"x.a":"1","x.b":"2"})")},
      {"f", Alloc("Unified", R"({"x.b":"2","x.a":"1"})")},
      {"g", Alloc("CpuQuota", "0")},
      {"h", Alloc("CpuQuota", "0")},
  });
  REQUIRE(u.ok());
  CHECK(u->owned.size() == 4);
  CHECK(u->resources.cpuset_cpus() == "0-3");
  CHECK(u->resources.hugepage_limits_size() == 2);
  CHECK(u->resources.unified_size() == 2);
}

TEST_CASE("A bad value in a later resource fails the whole build", "[apply][merge]") {
  StatusOr<ContainerUpdate> u = BuildContainerUpdate({
      {"a", Alloc("CpusetCpus", "0-3")},
      {"b", Alloc("CpusetMems", "0-64")},
  });
  REQUIRE_FALSE(u.ok());
  CHECK_THAT(u.status().message(), Contains("resource \"b\": CpusetMems value \"0-64\""));
}

TEST_CASE("Env and annotation conflicts: smallest resource name wins, each is reported",
          "[apply][merge]") {
  const Allocations allocations = {
      {"zeta", Alloc("", "", {{"K", "z"}, {"SHARED", "same"}}, {{"note", "z"}})},
      {"alpha", Alloc("", "", {{"K", "a"}, {"SHARED", "same"}, {"ONLY_A", "1"}})},
      {"mid", Alloc("", "", {{"K", "m"}}, {{"note", "m"}, {"other", "o"}})},
  };
  StatusOr<ContainerUpdate> u = BuildContainerUpdate(allocations);
  REQUIRE(u.ok());
  CHECK(u->envs == testing::Strings{{"K", "a"}, {"ONLY_A", "1"}, {"SHARED", "same"}});
  CHECK(u->annotations == testing::Strings{{"note", "m"}, {"other", "o"}});
  CHECK(u->conflicts == std::vector<std::string>{
                            "env \"K\": resource \"alpha\" sets \"a\", resource \"mid\" sets "
                            "\"m\"; using \"a\" from resource \"alpha\"",
                            "env \"K\": resource \"alpha\" sets \"a\", resource \"zeta\" sets "
                            "\"z\"; using \"a\" from resource \"alpha\"",
                            "annotation \"note\": resource \"mid\" sets \"m\", resource "
                            "\"zeta\" sets \"z\"; using \"m\" from resource \"mid\"",
                        });
}

TEST_CASE("Conflict order does not depend on protobuf map insertion order", "[apply][merge]") {
  // Same contents inserted in opposite orders into the protobuf maps.
  ::resourceplugin::v1alpha1::ResourceAllocationInfo a1, a2, b;
  const std::vector<std::string> keys = {"E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8"};
  for (const auto& k : keys) (*a1.mutable_envs())[k] = "a";
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) (*a2.mutable_envs())[*it] = "a";
  for (const auto& k : keys) (*b.mutable_envs())[k] = "b";
  StatusOr<ContainerUpdate> u1 = BuildContainerUpdate({{"a", a1}, {"b", b}});
  StatusOr<ContainerUpdate> u2 = BuildContainerUpdate({{"a", a2}, {"b", b}});
  REQUIRE(u1.ok());
  REQUIRE(u2.ok());
  REQUIRE(u1->conflicts.size() == keys.size());
  CHECK(u1->conflicts == u2->conflicts);
  CHECK_THAT(u1->conflicts.front(), Contains("env \"E1\""));
  CHECK_THAT(u1->conflicts.back(), Contains("env \"E8\""));
}

TEST_CASE("Env and annotation keys are validated", "[apply][merge]") {
  struct Case {
    Allocations allocations;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{{"nic", Alloc("", "", {{"", "x"}})}}, "resource \"nic\": env key \"\": is empty"},
      {{{"nic", Alloc("", "", {{"A=B", "x"}})}}, "resource \"nic\": env key \"A=B\": contains '='"},
      {{{"nic", Alloc("", "", {{std::string("A\0B", 3), "x"}})}},
       "resource \"nic\": env key \"A\\x00B\": contains NUL"},
      {{{"nic", Alloc("", "", {{"A", std::string("x\0y", 3)}})}},
       "resource \"nic\": env key \"A\": value contains NUL"},
      {{{"nic", Alloc("", "", {}, {{"", "x"}})}},
       "resource \"nic\": annotation key \"\": is empty"},
  };
  for (const Case& c : cases) {
    StatusOr<ContainerUpdate> u = BuildContainerUpdate(c.allocations);
    REQUIRE_FALSE(u.ok());
    CHECK(u.status().code() == StatusCode::kInvalidArgument);
    CHECK(u.status().message() == c.expected);
  }
  // Empty values and '=' in values are legitimate.
  CHECK(
      BuildContainerUpdate({{"nic", Alloc("", "", {{"A", ""}, {"B", "x=y"}}, {{"k", ""}})}}).ok());
}

TEST_CASE("ContainerUpdate equality", "[apply][equality]") {
  auto build = [](const Allocations& a) {
    StatusOr<ContainerUpdate> u = BuildContainerUpdate(a);
    REQUIRE(u.ok());
    return *std::move(u);
  };
  const ContainerUpdate base = build({{"cpu", Alloc("CpusetCpus", "0-3", {{"E", "1"}})},
                                      {"mem", Alloc("Unified", R"({"a.b":"1","c.d":"2"})")}});

  SECTION("same meaning, different spelling and map insertion order") {
    CHECK(base == build({{"cpu", Alloc("CpusetCpus", "3,2,1,0", {{"E", "1"}})},
                         {"mem", Alloc("Unified", R"({"c.d":"2","a.b":"1"})")}}));
  }
  SECTION("different cpuset") {
    CHECK_FALSE(base == build({{"cpu", Alloc("CpusetCpus", "0-4", {{"E", "1"}})},
                               {"mem", Alloc("Unified", R"({"a.b":"1","c.d":"2"})")}}));
  }
  SECTION("different unified value") {
    CHECK_FALSE(base == build({{"cpu", Alloc("CpusetCpus", "0-3", {{"E", "1"}})},
                               {"mem", Alloc("Unified", R"({"a.b":"1","c.d":"3"})")}}));
  }
  SECTION("different env, annotation or owned set") {
    ContainerUpdate other = base;
    other.envs["E"] = "2";
    CHECK_FALSE(base == other);
    other = base;
    other.annotations["x"] = "y";
    CHECK_FALSE(base == other);
    other = base;
    other.owned.insert(OciProperty::kCpuQuota);  // owning quota 0 differs from not owning it
    CHECK_FALSE(base == other);
  }
  SECTION("conflicts and non-owned fields are ignored") {
    ContainerUpdate other = base;
    other.conflicts.push_back("env \"E\": ...");
    other.resources.set_cpu_shares(1024);
    CHECK(base == other);
  }
  SECTION("hugepage entry order is ignored") {
    ContainerUpdate a, b;
    a.owned = b.owned = {OciProperty::kHugepageLimits};
    auto add = [](ContainerUpdate& u, const char* size, uint64_t limit) {
      auto* h = u.resources.add_hugepage_limits();
      h->set_page_size(size);
      h->set_limit(limit);
    };
    add(a, "2MB", 1);
    add(a, "1GB", 2);
    add(b, "1GB", 2);
    add(b, "2MB", 1);
    CHECK(a == b);
    b.resources.mutable_hugepage_limits(0)->set_limit(3);
    CHECK_FALSE(a == b);
  }
}

TEST_CASE("Fingerprint agrees with equality", "[apply][equality]") {
  auto build = [](const Allocations& a) {
    StatusOr<ContainerUpdate> u = BuildContainerUpdate(a);
    REQUIRE(u.ok());
    return *std::move(u);
  };
  const ContainerUpdate base = build({{"cpu", Alloc("CpusetCpus", "0-3", {{"E", "1"}})},
                                      {"mem", Alloc("Unified", R"({"a.b":"1","c.d":"2"})")}});
  // Equal updates in other spellings, and with what == ignores, have base's fingerprint.
  ContainerUpdate ignored = base;
  ignored.conflicts.push_back("env \"E\": ...");
  ignored.resources.set_cpu_shares(1024);
  const ContainerUpdate respelled = build({{"cpu", Alloc("CpusetCpus", "3,2,1,0", {{"E", "1"}})},
                                           {"mem", Alloc("Unified", R"({"c.d":"2","a.b":"1"})")}});
  for (const ContainerUpdate* same : std::vector<const ContainerUpdate*>{&ignored, &respelled}) {
    REQUIRE(*same == base);
    CHECK(Fingerprint(*same) == Fingerprint(base));
  }
  // Every difference == sees changes the fingerprint, including pieces that would run
  // together without the length prefixes (env "E"="1" vs "E1"="").
  std::vector<ContainerUpdate> different(6, base);
  different[0].resources.set_cpuset_cpus("0-4");
  different[1].envs["E"] = "2";
  different[2].annotations["x"] = "y";
  different[3].owned.insert(OciProperty::kCpuQuota);
  different[4].envs = {{"E1", ""}};
  different[5] = build({{"cpu", Alloc("CpusetCpus", "0-3", {{"E", "1"}})},
                        {"mem", Alloc("Unified", R"({"a.b":"1","c.d":"3"})")}});
  for (size_t i = 0; i < different.size(); ++i) {
    INFO("variant " << i);
    REQUIRE_FALSE(different[i] == base);
    CHECK(Fingerprint(different[i]) != Fingerprint(base));
  }
}

}  // namespace
}  // namespace qrm::apply
