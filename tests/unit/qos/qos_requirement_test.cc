// QoS resolution: both annotation families, the role table and every documented error.
#include "plugins/qos/qos_requirement.h"

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

namespace qrm::plugins {
namespace {

constexpr const char* kDocRoles = R"({
  "online-micro_service": {"qos_level": "shared_cores"},
  "ETL": {"qos_level": "reclaimed_cores"},
  "storage-service": {"qos_level": "dedicated_cores", "numa_binding": true,
                      "numa_anti_affinity": ["reranker"]},
  "reranker": {"qos_level": "dedicated_cores", "numa_binding": true},
  "numa-enhancement": {"qos_level": "dedicated_cores", "numa_binding": true,
                       "numa_anti_affinity": ["*"]}
})";

RoleTable DocRoles() {
  auto t = RoleTable::Parse(kDocRoles);
  REQUIRE(t.ok());
  return *t;
}

TEST_CASE("no annotations means shared_cores without NUMA binding") {
  auto q = ResolveQos({}, "", RoleTable());
  REQUIRE(q.ok());
  CHECK(q->level == QosLevel::kShared);
  CHECK_FALSE(q->numa_bound());
  CHECK(q->role.empty());
}

TEST_CASE("katalyst annotations: level and memory enhancement as strings or booleans") {
  auto q = ResolveQos({{"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
                       {"katalyst.kubewharf.io/memory_enhancement",
                        R"({"numa_binding":"true","numa_exclusive":"true"})"}},
                      "", RoleTable());
  REQUIRE(q.ok());
  CHECK(q->dedicated());
  CHECK(q->numa_binding);
  CHECK(q->numa_exclusive);

  auto b = ResolveQos({{"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
                       {"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding":true})"}},
                      "", RoleTable());
  REQUIRE(b.ok());
  CHECK(b->numa_binding);
  CHECK_FALSE(b->numa_exclusive);
}

TEST_CASE("the document's roles resolve through the role table") {
  RoleTable roles = DocRoles();
  auto etl = ResolveQos({{"kubernetes.io/pod-role", "ETL"}}, "", roles);
  REQUIRE(etl.ok());
  CHECK(etl->level == QosLevel::kReclaimed);
  CHECK(etl->role == "ETL");

  // The request's pod_role field wins over the annotation.
  auto storage = ResolveQos({{"kubernetes.io/pod-role", "ETL"}}, "storage-service", roles);
  REQUIRE(storage.ok());
  CHECK(storage->dedicated());
  CHECK(storage->numa_binding);
  CHECK(storage->role == "storage-service");
}

TEST_CASE("anti-affinity is symmetric and '*' excludes every other role but its own") {
  RoleTable roles = DocRoles();
  CHECK(roles.AntiAffine("storage-service", "reranker"));
  CHECK(roles.AntiAffine("reranker", "storage-service"));
  CHECK_FALSE(roles.AntiAffine("storage-service", "storage-service"));
  CHECK(roles.AntiAffine("numa-enhancement", "reranker"));
  CHECK(roles.AntiAffine("ETL", "numa-enhancement"));
  CHECK_FALSE(roles.AntiAffine("numa-enhancement", "numa-enhancement"));
  CHECK_FALSE(roles.AntiAffine("", "numa-enhancement"));
  CHECK_FALSE(roles.AntiAffine("online-micro_service", "ETL"));
}

TEST_CASE("bad annotations name the key and the value") {
  auto level = ResolveQos({{"katalyst.kubewharf.io/qos_level", "gold"}}, "", RoleTable());
  REQUIRE(level.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(level.status().message(),
             Catch::Contains("katalyst.kubewharf.io/qos_level") && Catch::Contains("\"gold\""));

  auto json =
      ResolveQos({{"katalyst.kubewharf.io/memory_enhancement", "{numa_binding"}}, "", RoleTable());
  REQUIRE(json.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(json.status().message(),
             Catch::Contains("memory_enhancement") && Catch::Contains("{numa_binding"));

  auto value = ResolveQos(
      {{"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding":"yes"})"}}, "", RoleTable());
  REQUIRE(value.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(value.status().message(), Catch::Contains("numa_binding"));

  auto role = ResolveQos({{"kubernetes.io/pod-role", "ghost"}}, "", DocRoles());
  REQUIRE(role.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(role.status().message(),
             Catch::Contains("kubernetes.io/pod-role") && Catch::Contains("\"ghost\""));

  auto reclaimed_bound =
      ResolveQos({{"katalyst.kubewharf.io/qos_level", "reclaimed_cores"},
                  {"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding":"true"})"}},
                 "", RoleTable());
  CHECK(reclaimed_bound.status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("role table errors name the role, the key and the value") {
  auto unknown_key = RoleTable::Parse(R"({"a": {"qos_level": "shared_cores", "pool": "x"}})");
  REQUIRE_FALSE(unknown_key.ok());
  CHECK_THAT(unknown_key.status().message(), Catch::Contains("\"a\"") && Catch::Contains("pool"));

  auto level = RoleTable::Parse(R"({"a": {"qos_level": "platinum"}})");
  REQUIRE_FALSE(level.ok());
  CHECK_THAT(level.status().message(), Catch::Contains("platinum"));

  auto type = RoleTable::Parse(R"({"a": {"qos_level": "dedicated_cores", "numa_binding": "yes"}})");
  REQUIRE_FALSE(type.ok());
  CHECK_THAT(type.status().message(), Catch::Contains("numa_binding") && Catch::Contains("yes"));

  auto dangling =
      RoleTable::Parse(R"({"a": {"qos_level": "dedicated_cores", "numa_anti_affinity": ["b"]}})");
  REQUIRE_FALSE(dangling.ok());
  CHECK_THAT(dangling.status().message(), Catch::Contains("\"b\""));

  auto twice = RoleTable::Parse(
      R"({"a": {"qos_level": "shared_cores"}, "a": {"qos_level": "dedicated_cores"}})");
  REQUIRE_FALSE(twice.ok());
  CHECK_THAT(twice.status().message(), Catch::Contains("\"a\" is defined twice"));

  // A NUL inside the level is part of the value, not its end.
  auto nul = RoleTable::Parse(std::string(R"({"a": {"qos_level": "shared_cores\u0000x"}})"));
  REQUIRE_FALSE(nul.ok());
  CHECK_THAT(nul.status().message(), Catch::Contains("qos_level"));

  CHECK_FALSE(RoleTable::Parse(R"({"a": {}})").ok());
  CHECK_FALSE(RoleTable::Parse("[1]").ok());
  CHECK_FALSE(RoleTable::Parse("{").ok());
  auto empty = RoleTable::Parse("");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("requested quantities must be finite, non-negative and bounded") {
  ::resourceplugin::v1alpha1::ResourceRequest req;
  (*req.mutable_resource_requests())["cpu"] = 4;
  auto ok = RequestedQuantity(req, "cpu", 1024);
  REQUIRE(ok.ok());
  CHECK(*ok == 4);
  for (double bad : {-1.0, 1e9, std::nan(""), std::numeric_limits<double>::infinity()}) {
    (*req.mutable_resource_requests())["cpu"] = bad;
    auto q = RequestedQuantity(req, "cpu", 1024);
    REQUIRE(q.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(q.status().message(), Catch::Contains("cpu"));
  }
  CHECK_FALSE(RequestedQuantity(req, "memory", 1).ok());
}

}  // namespace
}  // namespace qrm::plugins
