// The extender's verbs over its node, NodeMetric and pod tables: both node forms, unknown
// nodes, bad metrics, scores scaled to the extender range, and the bind assumption.
#include "cluster/scheduler/extender_service.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/unit/cluster/scheduler/scheduler_test_util.h"

namespace qrm::cluster::scheduler {
namespace {

using namespace qrm::cluster::scheduler::testing;
using Catch::Matchers::Contains;
namespace la = loadaware;

// node-a is loaded (70 of 96 cores: 73% > 65% with the pod), node-b is not (10 cores).
void WatchTwoNodes(ExtenderService& s) {
  s.UpsertNode(DecodeNode(NodeJson("node-a")));
  s.UpsertNode(DecodeNode(NodeJson("node-b")));
  s.UpsertNodeMetric(Metric("node-a", 70, 256));
  s.UpsertNodeMetric(Metric("node-b", 10, 64));
}

TEST_CASE("filter by node names answers node names with Koordinator's reasons") {
  ServiceFixture f;
  WatchTwoNodes(*f);
  const extender::ExtenderFilterResult r =
      f->Filter(NamesArgs(PodJson("web"), R"(["node-a","node-b","node-c"])"));
  CHECK(r.error.empty());
  CHECK_FALSE(r.nodes.has_value());
  CHECK(r.node_names == std::vector<std::string>{"node-b"});
  REQUIRE(r.failed_nodes.has_value());
  CHECK(*r.failed_nodes ==
        extender::FailedNodesMap{{"node-a", "node(s) cpu usage exceed threshold"},
                                 {"node-c", std::string(kUnknownNodeReason)}});
  CHECK_FALSE(r.failed_and_unresolvable_nodes.has_value());
  const std::string metrics = f.registry.Exposition();
  CHECK_THAT(metrics, Contains("qrm_extender_requests_total{result=\"ok\",verb=\"filter\"} 1"));
  CHECK_THAT(metrics, Contains("qrm_extender_filtered_nodes_total{reason=\"usage-exceeds\"} 1"));
  CHECK_THAT(metrics, Contains("qrm_extender_filtered_nodes_total{reason=\"unknown-node\"} 1"));
  CHECK_THAT(metrics, Contains("qrm_extender_request_seconds_count{verb=\"filter\"} 1"));
}

TEST_CASE("filter by node objects answers the objects as received") {
  ServiceFixture f;  // no node informer: the request's nodes are judged
  f->UpsertNodeMetric(Metric("node-a", 70, 256));
  f->UpsertNodeMetric(Metric("node-b", 10, 64));
  const std::string items = "[" + NodeJson("node-a") + "," + NodeJson("node-b") + "]";
  const extender::ExtenderFilterResult r = f->Filter(NodesArgs(PodJson("web"), items));
  CHECK(r.error.empty());
  CHECK_FALSE(r.node_names.has_value());
  REQUIRE(r.nodes.has_value());
  REQUIRE(r.nodes->items.size() == 1);
  CHECK(r.nodes->items[0].json == NodeJson("node-b"));  // spec.podCIDR and all
  CHECK(r.failed_nodes->at("node-a") == "node(s) cpu usage exceed threshold");
  CHECK(f->NodeCount() == 2);
  CHECK_THAT(extender::EncodeExtenderFilterResult(r),
             Contains(R"("items":[)" + NodeJson("node-b") + "]"));
}

TEST_CASE("filter re-reads a request's node when a later request changes it") {
  ServiceFixture f;
  f->UpsertNodeMetric(Metric("node-a", 70, 256));
  CHECK(f->Filter(NodesArgs(PodJson("web"), "[" + NodeJson("node-a") + "]")).nodes->items.empty());
  // Twice the cores: 70 of 192 is 37%.
  const extender::ExtenderFilterResult bigger =
      f->Filter(NodesArgs(PodJson("web"), "[" + NodeJson("node-a", 192) + "]"));
  CHECK(bigger.nodes->items.size() == 1);
}

TEST_CASE("filter keeps an informer's node over a request's copy") {
  ServiceFixture f;
  f->UpsertNode(DecodeNode(NodeJson("node-a", 192)));
  f->UpsertNodeMetric(Metric("node-a", 70, 256));
  const extender::ExtenderFilterResult r =
      f->Filter(NodesArgs(PodJson("web"), "[" + NodeJson("node-a", 96) + "]"));
  CHECK(r.nodes->items.size() == 1);  // judged on 192 cores
}

TEST_CASE("filter makes a node with a bad NodeMetric a failed node never an idle one") {
  ServiceFixture f;
  WatchTwoNodes(*f);
  NodeMetric negative = Metric("node-a", 1, 1);
  negative.status.node_metric->node_usage.resources["cpu"] = *Quantity::Parse("-5");
  f->UpsertNodeMetric(negative);
  NodeMetric far = Metric("node-b", 1, 1);
  far.status.update_time = int64_t{1} << 40;
  f->UpsertNodeMetric(far);
  const extender::ExtenderFilterResult r =
      f->Filter(NamesArgs(PodJson("web"), R"(["node-a","node-b"])"));
  CHECK(r.node_names->empty());
  CHECK_THAT(r.failed_nodes->at("node-a"), Contains("node node-a: NodeMetric nodeUsage: cpu is "
                                                    "negative (-5000)"));
  CHECK_THAT(r.failed_nodes->at("node-b"), Contains("node node-b: NodeMetric node-b "
                                                    "status.updateTime 1099511627776"));
  CHECK_THAT(f.registry.Exposition(),
             Contains("qrm_extender_filtered_nodes_total{reason=\"error\"} 2"));
  const StatusOr<extender::HostPriorityList> scores =
      f->Prioritize(NamesArgs(PodJson("web"), R"(["node-a","node-b"])"));
  REQUIRE(scores.ok());
  CHECK((*scores)[0].score == 0);
  CHECK((*scores)[1].score == 0);

  // A DaemonSet pod does not read the load, so the bad metric does not stop it.
  const std::string ds =
      PodJson("agent", 0, 0, "", R"(,"ownerReferences":[{"kind":"DaemonSet","name":"agent"}])");
  CHECK(f->Filter(NamesArgs(ds, R"(["node-a","node-b"])")).node_names->size() == 2);
  // A good metric clears the error.
  f->UpsertNodeMetric(Metric("node-b", 10, 64));
  CHECK(f->Filter(NamesArgs(PodJson("web"), R"(["node-b"])")).node_names->size() == 1);
}

TEST_CASE("filter refuses a node whose NodeMetric has no updateTime as expired") {
  ServiceFixture f;
  f->UpsertNode(DecodeNode(NodeJson("node-a")));
  NodeMetric untimed = Metric("node-a", 1, 1);
  untimed.status.update_time.reset();
  f->UpsertNodeMetric(untimed);
  const extender::ExtenderFilterResult r = f->Filter(NamesArgs(PodJson("web"), R"(["node-a"])"));
  CHECK(r.failed_nodes->at("node-a") == "node(s) nodeMetric expired");
  CHECK((*f->Prioritize(NamesArgs(PodJson("web"), R"(["node-a"])")))[0].score == 0);
}

TEST_CASE("filter answers Error for requests it cannot judge") {
  ServiceFixture f;
  WatchTwoNodes(*f);
  CHECK(f->Filter(extender::ExtenderArgs{}).error == "ExtenderArgs: Pod is null");
  extender::ExtenderArgs no_nodes;
  no_nodes.pod = DecodePod(PodJson("web"));
  CHECK(f->Filter(no_nodes).error == "ExtenderArgs: Nodes and NodeNames are both null");
  const std::string bad_factors = PodJson(
      "web", 1000, 1, "",
      R"(,"annotations":{"scheduling.koordinator.sh/load-estimated-scaling-factors":"{\"cpu\":-1}"})");
  la::LoadAwareArgs args = la::DefaultArgs();
  args.allow_customize_estimation = true;
  ServiceFixture custom(args);
  custom->UpsertNode(DecodeNode(NodeJson("node-a")));
  const extender::ExtenderFilterResult r = custom->Filter(NamesArgs(bad_factors, R"(["node-a"])"));
  CHECK_THAT(r.error, Contains("pod default/web: "));
  CHECK_THAT(custom.registry.Exposition(),
             Contains("qrm_extender_requests_total{result=\"error\",verb=\"filter\"} 1"));
  CHECK_FALSE(custom->Prioritize(NamesArgs(bad_factors, R"(["node-a"])")).ok());
}

TEST_CASE("prioritize scales the load-aware score to the extender range") {
  ServiceFixture f;
  WatchTwoNodes(*f);
  const StatusOr<extender::HostPriorityList> list =
      f->Prioritize(NamesArgs(PodJson("web"), R"(["node-a","node-b","node-c"])"));
  REQUIRE(list.ok());
  REQUIRE(list->size() == 3);
  // Load-aware scores 37 and 88 (cpu and memory weighted 1:1), truncated to tenths.
  CHECK((*list)[0].host == "node-a");
  CHECK((*list)[0].score == 3);
  CHECK((*list)[1].host == "node-b");
  CHECK((*list)[1].score == 8);
  CHECK((*list)[2].score == 0);  // unknown: an error, scored 0
  CHECK_THAT(f.registry.Exposition(), Contains("qrm_extender_errors_total{kind=\"node\"} 1"));
}

TEST_CASE("prioritize judges request nodes like filter") {
  ServiceFixture f;
  f->UpsertNodeMetric(Metric("node-b", 10, 64));
  const StatusOr<extender::HostPriorityList> list =
      f->Prioritize(NodesArgs(PodJson("web"), "[" + NodeJson("node-b") + "]"));
  REQUIRE(list.ok());
  CHECK(list->at(0).score == 8);
}

TEST_CASE("bind assumes the pod at once and unassumes it when the bind fails") {
  ServiceFixture f;
  WatchTwoNodes(*f);
  const std::string pod = PodJson("burst", 16000, 32);
  REQUIRE(f->Filter(NamesArgs(pod, R"(["node-b"])")).node_names->size() == 1);
  const extender::ExtenderBindingArgs bind{"burst", "default", "uid-burst", "node-b"};
  StatusOr<BindPlan> plan = f->PlanBind(bind);
  REQUIRE(plan.ok());
  CHECK(plan->assumed);
  CHECK(plan->path == "/api/v1/namespaces/default/pods/burst/binding");
  CHECK(plan->body ==
        R"({"kind":"Binding","apiVersion":"v1","metadata":{"name":"burst","namespace":"default",)"
        R"("uid":"uid-burst"},"target":{"kind":"Node","name":"node-b"}})");
  CHECK(f->cache().PodCount("node-b") == 1);
  // The next pod is judged with the burst pod's estimate on node-b: 10 + 13.6 cores.
  const StatusOr<extender::HostPriorityList> after =
      f->Prioritize(NamesArgs(PodJson("next"), R"(["node-b"])"));
  CHECK(after->at(0).score == 7);

  f->FinishBind(bind, UnavailableError("apiserver down"));
  CHECK(f->cache().PodCount("node-b") == 0);
  CHECK_THAT(f.registry.Exposition(), Contains("qrm_extender_errors_total{kind=\"bind\"} 1"));
  // A retry assumes it again; the informer then confirms it.
  REQUIRE(f->PlanBind(bind)->assumed);
  f->FinishBind(bind, Status::Ok());
  f->UpsertPod(DecodePod(PodJson("burst", 16000, 32)));  // an event older than the bind
  CHECK(f->cache().PodCount("node-b") == 1);
  f->UpsertPod(DecodePod(PodJson("burst", 16000, 32, "node-b")));
  CHECK(f->cache().PodCount("node-b") == 1);
  f->RemovePod("default/burst");
  CHECK(f->cache().PodCount("node-b") == 0);
  CHECK(f->PodCount() == 0);
}

TEST_CASE("bind of a pod never seen plans the call without assuming") {
  ServiceFixture f;
  StatusOr<BindPlan> plan = f->PlanBind({"ghost", "default", "uid-ghost", "node-a"});
  REQUIRE(plan.ok());
  CHECK_FALSE(plan->assumed);
  CHECK(f->cache().PodCount("node-a") == 0);
  CHECK(f->PlanBind({"", "default", "", "node-a"}).status().message() ==
        "ExtenderBindingArgs: PodName \"\", PodNamespace \"default\" and Node \"node-a\" must "
        "all be set");
}

TEST_CASE("pod events move a pod's load with its node and drop it when it ends") {
  ServiceFixture f;
  WatchTwoNodes(*f);
  f->UpsertPod(DecodePod(PodJson("web", 1000, 1, "node-a")));
  CHECK(f->cache().PodCount("node-a") == 1);
  f->UpsertPod(DecodePod(PodJson("web", 1000, 1, "node-b")));
  CHECK(f->cache().PodCount("node-a") == 0);
  CHECK(f->cache().PodCount("node-b") == 1);
  std::string done = PodJson("web", 1000, 1, "node-b");
  done.replace(done.find("Running"), 7, "Succeeded");
  f->UpsertPod(DecodePod(done));
  CHECK(f->cache().PodCount("node-b") == 0);
  f->RemovePod("uid-web");
  CHECK(f->PodCount() == 0);
  f->RemovePod("uid-never");  // nothing to do
}

TEST_CASE("node and metric removals make nodes unknown and unreported") {
  ServiceFixture f;
  WatchTwoNodes(*f);
  f->RemoveNodeMetric("node-a");
  CHECK(f->Filter(NamesArgs(PodJson("web"), R"(["node-a"])")).node_names->size() == 1);
  f->RemoveNode("node-a");
  CHECK(f->Filter(NamesArgs(PodJson("web"), R"(["node-a"])")).failed_nodes->at("node-a") ==
        kUnknownNodeReason);
  CHECK(f->NodeCount() == 1);
}

TEST_CASE("node annotations that do not parse are counted and left out") {
  ServiceFixture f;
  f->UpsertNode(DecodeNode(
      NodeJson("node-a", 96, 512,
               R"({"scheduling.koordinator.sh/usage-thresholds":"{\"usageThresholds\":"})")));
  f->UpsertNodeMetric(Metric("node-a", 70, 256));
  // The annotation is absent: the plugin's 65% applies.
  CHECK(f->Filter(NamesArgs(PodJson("web"), R"(["node-a"])")).failed_nodes->size() == 1);
  CHECK_THAT(f.registry.Exposition(), Contains("qrm_extender_errors_total{kind=\"annotation\"} 1"));
}

}  // namespace
}  // namespace qrm::cluster::scheduler
