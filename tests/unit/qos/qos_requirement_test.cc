// QoS resolution: both annotation families, the role table and every documented error.
#include "qos/qos_requirement.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include <catch2/catch.hpp>
#include <unistd.h>

namespace qrm::qos {
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

TEST_CASE("the kubewharf pod_role label names the role, and wins over the annotation") {
  const RoleTable roles = DocRoles();
  const std::map<std::string, std::string> labels = {
      {"katalyst.kubewharf.io/pod_role", "storage-service"}};
  const std::map<std::string, std::string> annotations = {{"kubernetes.io/pod-role", "ETL"}};
  CHECK(PodRoleOf(labels, annotations) == "storage-service");
  CHECK(PodRoleOf({}, annotations) == "ETL");
  CHECK(PodRoleOf({}, {}).empty());
  // A pod_role annotation is not the label (the kubewharf kubelet reads the label).
  CHECK(PodRoleOf({}, {{"katalyst.kubewharf.io/pod_role", "ETL"}}).empty());

  auto host = ResolveQos(labels, annotations, roles);
  REQUIRE(host.ok());
  CHECK(host->level == QosLevel::kDedicated);
  CHECK(host->role == "storage-service");
  CHECK(host->annotated);

  // The plugins' overload, from a request whose pod_role field is unset, agrees.
  resourceplugin::v1alpha1::ResourceRequest req;
  req.mutable_labels()->insert(labels.begin(), labels.end());
  req.mutable_annotations()->insert(annotations.begin(), annotations.end());
  auto plugin = ResolveQos(req, roles);
  REQUIRE(plugin.ok());
  CHECK(plugin->level == QosLevel::kDedicated);
  CHECK(plugin->role == "storage-service");
}

TEST_CASE("pod_type comes from the katalyst.kubewharf.io/pod_type annotation") {
  CHECK(PodTypeOf({{"katalyst.kubewharf.io/pod_type", "batch"}}) == "batch");
  CHECK(PodTypeOf({{"kubernetes.io/resource-type", "batch"}}).empty());
}

TEST_CASE("annotated tells an explicit level from the shared_cores default") {
  auto none = ResolveQos({}, "", RoleTable());
  REQUIRE(none.ok());
  CHECK(none->level == QosLevel::kShared);
  CHECK_FALSE(none->annotated);
  auto shared = ResolveQos({{"katalyst.kubewharf.io/qos_level", "shared_cores"}}, "", RoleTable());
  REQUIRE(shared.ok());
  CHECK(shared->annotated);
  auto role = ResolveQos({}, "online-micro_service", DocRoles());
  REQUIRE(role.ok());
  CHECK(role->level == QosLevel::kShared);
  CHECK(role->annotated);
}

TEST_CASE("the role table loads from text or from a file, not both") {
  auto empty = LoadRoleTable("", "");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  auto text = LoadRoleTable(kDocRoles, "");
  REQUIRE(text.ok());
  CHECK(text->Find("ETL") != nullptr);

  char path[] = "/tmp/qos_roles_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string json = kDocRoles;
  REQUIRE(::write(fd, json.data(), json.size()) == static_cast<ssize_t>(json.size()));
  ::close(fd);
  auto file = LoadRoleTable("", path);
  REQUIRE(file.ok());
  CHECK(file->Find("storage-service")->level == QosLevel::kDedicated);

  auto both = LoadRoleTable(kDocRoles, path);
  REQUIRE_FALSE(both.ok());
  CHECK_THAT(both.status().message(), Catch::Contains("both set"));
  ::unlink(path);

  auto missing = LoadRoleTable("", "/nonexistent/roles.json");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("/nonexistent/roles.json"));

  char bad[] = "/tmp/qos_roles_bad_XXXXXX";
  const int bad_fd = ::mkstemp(bad);
  REQUIRE(bad_fd >= 0);
  REQUIRE(::write(bad_fd, "{\"x\": {}}", 9) == 9);
  ::close(bad_fd);
  auto invalid = LoadRoleTable("", bad);
  REQUIRE_FALSE(invalid.ok());
  CHECK_THAT(invalid.status().message(),
             Catch::Contains(bad) && Catch::Contains("missing key \"qos_level\""));
  ::unlink(bad);
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
  CHECK_THAT(role.status().message(), Catch::Contains("kubernetes.io/pod-role") &&
                                          Catch::Contains("\"ghost\"") &&
                                          Catch::Contains("katalyst.kubewharf.io/pod_role"));

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

  // A comma would split the role in qrm-advisor's NodeResourceTopology zone attribute.
  auto comma = RoleTable::Parse(R"({"a,b": {"qos_level": "shared_cores"}})");
  REQUIRE_FALSE(comma.ok());
  CHECK_THAT(comma.status().message(), Catch::Contains("invalid role name \"a,b\""));

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
}  // namespace qrm::qos
