// CreateOrUpdate against the in-process API server's collection semantics (create, update
// with resourceVersion, the status subresource, conflicts).
#include "cluster/objects/object_writer.h"

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "cluster/objects/node_metric_json.h"
#include "testing/kube/object_collection.h"
#include "testing/kube/test_api_server.h"

namespace qrm::cluster {
namespace {

using qrm::testing::CollectionOptions;
using qrm::testing::ObjectCollection;
using qrm::testing::TestApiServer;

kube::KubeClient ClientFor(const TestApiServer& server) {
  kube::ClusterConfig config;
  config.server = server.url();
  config.token = "test-token";
  auto client = kube::KubeClient::Create(config);
  REQUIRE(client.ok());
  return std::move(client).value();
}

struct Fixture {
  TestApiServer server;
  ObjectCollection metrics{server,
                           {kNodeMetricsPath, kNodeMetricKind, kNodeMetricApiVersion, true}};
  Fixture() { REQUIRE(server.Start().ok()); }
};

ObjectWrite Write(const std::string& status_json) {
  NodeMetric m;
  m.metadata.name = "node-a";
  m.metadata.labels["app.kubernetes.io/managed-by"] = "qrm-advisor";
  ObjectWrite w;
  w.collection = kNodeMetricsPath;
  w.name = "node-a";
  w.create_body = EncodeNodeMetric(m);
  w.members["status"] = status_json;
  w.status_subresource = true;
  return w;
}

std::string UpdateTimeOf(const std::string& json) {
  auto m = DecodeNodeMetric(json);
  REQUIRE(m.ok());
  return m->status.update_time ? std::to_string(*m->status.update_time) : "";
}

TEST_CASE("a missing NodeMetric is created and its status written") {
  Fixture f;
  auto client = ClientFor(f.server);
  auto result = CreateOrUpdate(client, Write(R"({"updateTime":"2026-11-27T00:00:10Z"})"));
  REQUIRE(result.ok());
  CHECK(result->created);
  CHECK(result->conflicts == 0);
  CHECK(f.metrics.writes() == 2);  // the create (its status dropped) and the status update
  auto stored = f.metrics.Get("node-a");
  REQUIRE(stored);
  CHECK(UpdateTimeOf(*stored) == "1795737610");
  auto m = DecodeNodeMetric(*stored);
  CHECK(m->metadata.labels.at("app.kubernetes.io/managed-by") == "qrm-advisor");
  CHECK(m->metadata.resource_version == result->resource_version);
}

TEST_CASE("an existing NodeMetric keeps its spec and labels and gets the new status") {
  Fixture f;
  f.metrics.Seed("node-a", R"({"kind":"NodeMetric","apiVersion":"slo.koordinator.sh/v1alpha1",)"
                           R"("metadata":{"name":"node-a","labels":{"owner":"koord-manager"},)"
                           R"("ownerReferences":[{"kind":"Node","name":"node-a"}]},)"
                           R"("spec":{"metricCollectPolicy":{"reportIntervalSeconds":30}},)"
                           R"("futureField":{"kept":true}})");
  auto client = ClientFor(f.server);
  auto result = CreateOrUpdate(client, Write(R"({"updateTime":"2026-11-27T00:00:10Z"})"));
  REQUIRE(result.ok());
  CHECK_FALSE(result->created);
  CHECK(f.metrics.writes() == 1);
  rapidjson::Document doc;
  doc.Parse(f.metrics.Get("node-a")->c_str());
  CHECK(std::string(doc["metadata"]["labels"]["owner"].GetString()) == "koord-manager");
  CHECK(doc["metadata"]["ownerReferences"].IsArray());
  CHECK(doc["spec"]["metricCollectPolicy"]["reportIntervalSeconds"].GetInt() == 30);
  CHECK(doc["futureField"]["kept"].GetBool());
  CHECK(std::string(doc["status"]["updateTime"].GetString()) == "2026-11-27T00:00:10Z");
}

TEST_CASE("a conflict is read again and retried until the limit") {
  Fixture f;
  auto client = ClientFor(f.server);
  REQUIRE(CreateOrUpdate(client, Write(R"({})")).ok());
  f.metrics.FailWrites(409, 2);
  auto retried = CreateOrUpdate(client, Write(R"({"updateTime":"2026-11-27T00:01:00Z"})"));
  REQUIRE(retried.ok());
  CHECK(retried->conflicts == 2);
  CHECK(UpdateTimeOf(*f.metrics.Get("node-a")) == "1795737660");
  f.metrics.FailWrites(409, 10);
  auto gave_up = CreateOrUpdate(client, Write(R"({})"));
  REQUIRE_FALSE(gave_up.ok());
  CHECK(gave_up.status().code() == StatusCode::kAborted);
  CHECK_THAT(gave_up.status().message(), Catch::Contains("PUT"));
  CHECK_THAT(gave_up.status().message(), Catch::Contains("/nodemetrics/node-a/status"));
}

TEST_CASE("a server error is returned with its message and nothing is half written") {
  Fixture f;
  auto client = ClientFor(f.server);
  f.metrics.FailWrites(500, 1);
  auto failed = CreateOrUpdate(client, Write(R"({})"));
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.status().message(), Catch::Contains("scripted failure"));
  CHECK(f.metrics.Names().empty());
}

TEST_CASE("a bad object name is refused before any request") {
  Fixture f;
  auto client = ClientFor(f.server);
  ObjectWrite w = Write("{}");
  w.name = "Node_A";
  auto refused = CreateOrUpdate(client, w);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("Node_A"));
  CHECK(f.server.requests() == 0);
}

TEST_CASE("members replace their namesakes and are added when missing") {
  auto replaced = ReplaceMembers(R"({"a":1,"status":{"old":true}})",
                                 {{"status", R"({"new":true})"}, {"zones", "[]"}});
  REQUIRE(replaced.ok());
  CHECK(*replaced == R"({"a":1,"status":{"new":true},"zones":[]})");
  CHECK_FALSE(ReplaceMembers("[]", {}).ok());
  CHECK_FALSE(ReplaceMembers("{}", {{"status", "{"}}).ok());
}

}  // namespace
}  // namespace qrm::cluster
