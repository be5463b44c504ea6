// The verbs over HTTP bodies: kube-scheduler's recorded requests (tests/unit/cluster/extender/
// golden) through the service, and what a bad body gets back.
#include <string>

#include <catch2/catch.hpp>

#include "cluster/extender/extender_codec.h"
#include "cluster/scheduler/extender_service.h"
#include "testing/temp_dir.h"
#include "tests/unit/cluster/scheduler/scheduler_test_util.h"

namespace qrm::cluster::scheduler {
namespace {

using namespace qrm::cluster::scheduler::testing;
using Catch::Matchers::Contains;

std::string Golden(const std::string& name) {
  return qrm::testing::ReadFile(std::string(QRM_EXTENDER_GOLDEN) + "/" + name);
}

extender::ExtenderFilterResult FilterAnswer(const http::Response& response) {
  CHECK(response.status == 200);
  CHECK(response.content_type == "application/json");
  StatusOr<extender::ExtenderFilterResult> result =
      extender::DecodeExtenderFilterResult(response.body);
  INFO(response.body);
  REQUIRE(result.ok());
  return *result;
}

TEST_CASE("recorded filter request with node objects passes nodes without metrics unchanged") {
  ServiceFixture f;
  const std::string body = Golden("extender_args_nodes.json");
  const extender::ExtenderFilterResult r = FilterAnswer(f->HandleFilter(body));
  CHECK(r.error.empty());
  REQUIRE(r.nodes.has_value());
  REQUIRE(r.nodes->items.size() == 2);
  const extender::ExtenderArgs args = *extender::DecodeExtenderArgs(body);
  CHECK(r.nodes->items[0].json == args.nodes->items[0].json);
  CHECK(r.nodes->items[1].json == args.nodes->items[1].json);
  CHECK(r.failed_nodes->empty());
  CHECK_FALSE(r.node_names.has_value());
}

TEST_CASE("recorded filter request with node objects refuses a loaded node") {
  ServiceFixture f;
  // node-a has 15890m allocatable: 11 cores used is 70% with the web pod's 85m estimate.
  f->UpsertNodeMetric(Metric("node-a", 11, 8));
  f->UpsertNodeMetric(Metric("node-b", 1, 1));
  const extender::ExtenderFilterResult r =
      FilterAnswer(f->HandleFilter(Golden("extender_args_nodes.json")));
  REQUIRE(r.nodes->items.size() == 1);
  CHECK(r.nodes->items[0].metadata.name == "node-b");
  CHECK(r.failed_nodes->at("node-a") == "node(s) cpu usage exceed threshold");
}

TEST_CASE("recorded filter request by node names needs the nodes watched") {
  ServiceFixture f;
  const std::string body = Golden("extender_args_nodenames.json");
  extender::ExtenderFilterResult r = FilterAnswer(f->HandleFilter(body));
  CHECK(r.node_names->empty());
  CHECK(r.failed_nodes->size() == 3);
  CHECK(r.failed_nodes->at("node-b") == kUnknownNodeReason);
  for (const char* name : {"node-a", "node-b", "node-c"}) {
    f->UpsertNode(DecodeNode(NodeJson(name, 32, 128)));
  }
  f->UpsertNodeMetric(Metric("node-b", 1, 1));
  f->UpsertNodeMetric(Metric("node-c", 30, 8));
  r = FilterAnswer(f->HandleFilter(body));
  CHECK(r.node_names == std::vector<std::string>{"node-a", "node-b"});
  CHECK(r.failed_nodes->at("node-c") == "node(s) cpu usage exceed threshold");
  const http::Response scores = f->HandlePrioritize(body);
  CHECK(scores.status == 200);
  StatusOr<extender::HostPriorityList> list = extender::DecodeHostPriorityList(scores.body);
  REQUIRE(list.ok());
  REQUIRE(list->size() == 3);
  CHECK(list->at(0).score == 0);  // no NodeMetric: Koordinator scores 0
  CHECK(list->at(1).score > list->at(2).score);
}

TEST_CASE("a filter body that does not decode gets 200 with Error") {
  ServiceFixture f;
  const extender::ExtenderFilterResult r = FilterAnswer(f->HandleFilter("{"));
  CHECK_THAT(r.error, Contains("ExtenderArgs: invalid JSON at byte 1"));
  CHECK_FALSE(r.nodes.has_value());
  CHECK_FALSE(r.node_names.has_value());
  const extender::ExtenderFilterResult typed =
      FilterAnswer(f->HandleFilter(R"({"Pod":{"spec":{"priority":"high"}},"NodeNames":[]})"));
  CHECK(typed.error == "ExtenderArgs: Pod.spec.priority: expected an int32, got \"high\"");
  CHECK_THAT(f.registry.Exposition(),
             Contains("qrm_extender_requests_total{result=\"bad-request\",verb=\"filter\"} 2"));
}

TEST_CASE("a prioritize body that does not decode gets 400 with the reason") {
  ServiceFixture f;
  const http::Response r = f->HandlePrioritize("[]");
  CHECK(r.status == 400);
  CHECK(r.body == "ExtenderArgs: (top): expected an object, got an array");
  const http::Response no_pod = f->HandlePrioritize(R"({"NodeNames":["a"]})");
  CHECK(no_pod.status == 400);
  CHECK(no_pod.body == "ExtenderArgs: Pod is null");
}

TEST_CASE("bind over HTTP posts the binding and reports the call's error") {
  ServiceFixture f;
  f->UpsertNode(DecodeNode(NodeJson("node-a")));
  f->HandleFilter(R"({"Pod":)" + PodJson("web", 1000, 1) + R"(,"NodeNames":["node-a"]})");
  std::string posted;
  const http::Response ok = f->HandleBind(
      R"({"PodName":"web","PodNamespace":"default","PodUID":"uid-web","Node":"node-a"})",
      [&](const BindPlan& plan) {
        posted = plan.path;
        return Status::Ok();
      });
  CHECK(ok.status == 200);
  CHECK(ok.body == R"({"Error":""})");
  CHECK(posted == "/api/v1/namespaces/default/pods/web/binding");
  CHECK(f->cache().PodCount("node-a") == 1);

  f->HandleFilter(R"({"Pod":)" + PodJson("api", 1000, 1) + R"(,"NodeNames":["node-a"]})");
  const http::Response failed = f->HandleBind(
      R"({"PodName":"api","PodNamespace":"default","PodUID":"uid-api","Node":"node-a"})",
      [](const BindPlan&) { return FailedPreconditionError("pod api is already bound"); });
  CHECK(failed.status == 200);
  CHECK(failed.body == R"({"Error":"pod api is already bound"})");
  CHECK(f->cache().PodCount("node-a") == 1);

  const http::Response bad = f->HandleBind("nope", [](const BindPlan&) { return Status::Ok(); });
  CHECK(bad.status == 200);
  CHECK_THAT(bad.body, Contains("ExtenderBindingArgs: invalid JSON"));
  const std::string metrics = f.registry.Exposition();
  CHECK_THAT(metrics, Contains("qrm_extender_requests_total{result=\"ok\",verb=\"bind\"} 1"));
  CHECK_THAT(metrics, Contains("qrm_extender_requests_total{result=\"error\",verb=\"bind\"} 1"));
  CHECK_THAT(metrics,
             Contains("qrm_extender_requests_total{result=\"bad-request\",verb=\"bind\"} 1"));
}

}  // namespace
}  // namespace qrm::cluster::scheduler
