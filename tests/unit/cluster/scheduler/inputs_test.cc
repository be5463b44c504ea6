// Kubernetes objects to the decision core's inputs: Koordinator's labels and annotations, pod
// conditions, and NodeMetrics as koordlet writes them (cold start included).
#include "cluster/scheduler/inputs.h"

#include <string>

#include <catch2/catch.hpp>

#include "cluster/extender/extender_codec.h"
#include "cluster/objects/node_metric_json.h"
#include "testing/temp_dir.h"

namespace qrm::cluster::scheduler {
namespace {

using Catch::Matchers::Contains;
namespace la = loadaware;

constexpr int64_t kGi = int64_t{1} << 30;

extender::Pod DecodePod(const std::string& pod_json) {
  StatusOr<extender::ExtenderArgs> args =
      extender::DecodeExtenderArgs(R"({"Pod":)" + pod_json + R"(,"NodeNames":[]})");
  INFO(pod_json);
  REQUIRE(args.ok());
  return *args->pod;
}

extender::Node DecodeNode(const std::string& node_json) {
  StatusOr<extender::ExtenderArgs> args =
      extender::DecodeExtenderArgs(R"({"Nodes":{"items":[)" + node_json + "]}}");
  INFO(node_json);
  REQUIRE(args.ok());
  return args->nodes->items.at(0);
}

NodeMetric DecodeMetric(const std::string& json) {
  StatusOr<NodeMetric> metric = DecodeNodeMetric(json);
  INFO(json);
  REQUIRE(metric.ok());
  return *metric;
}

la::TimePoint At(int64_t unix_seconds, int64_t nanos = 0) {
  return la::TimePoint(std::chrono::seconds(unix_seconds) + std::chrono::nanoseconds(nanos));
}

TEST_CASE("pod input carries Koordinator's labels annotations and owners") {
  const extender::Pod pod = DecodePod(R"({
    "metadata":{"name":"agent-x","namespace":"kube-system","uid":"u1",
      "labels":{"koordinator.sh/priority-class":"koord-batch","koordinator.sh/qosClass":"BE"},
      "annotations":{"scheduling.koordinator.sh/reserve-pod":"true",
        "scheduling.koordinator.sh/load-estimated-scaling-factors":"{\"cpu\":90,\"memory\":50}",
        "scheduling.koordinator.sh/load-estimated-seconds-after-pod-scheduled":"180",
        "scheduling.koordinator.sh/load-estimated-seconds-after-initialized":"x"},
      "ownerReferences":[{"kind":"DaemonSet","name":"agent","controller":true}]},
    "spec":{"nodeName":"n1","priority":5000,
      "containers":[{"name":"c","resources":{"requests":{"cpu":"1500m","memory":"1Gi"},
                                             "limits":{"kubernetes.io/batch-cpu":"2000"}}}],
      "initContainers":[{"name":"side","restartPolicy":"Always",
                         "resources":{"requests":{"cpu":"100m"}}},
                        {"name":"init","resources":{"requests":{"cpu":"2"}}}],
      "overhead":{"cpu":"250m"},
      "resources":{"limits":{"memory":"4Gi"}}},
    "status":{"phase":"Running","qosClass":"BestEffort"}})");
  Warnings warnings;
  const la::PodInput in = PodInputFrom(pod, &warnings);
  CHECK(warnings.empty());
  CHECK(in.namespace_ == "kube-system");
  CHECK(in.name == "agent-x");
  CHECK(in.uid == "u1");
  CHECK(in.node_name == "n1");
  CHECK(in.priority_class_label == "koord-batch");
  CHECK(in.qos_class_label == "BE");
  CHECK(in.owned_by_daemonset);
  CHECK(in.reserve_pod);
  REQUIRE(in.custom_scaling_factors.has_value());
  CHECK(*in.custom_scaling_factors == std::map<std::string, int64_t>{{"cpu", 90}, {"memory", 50}});
  CHECK(in.custom_seconds_after_pod_scheduled == "180");
  CHECK(in.custom_seconds_after_initialized == "x");  // parsed, and refused, by the core
  CHECK(in.priority == 5000);
  REQUIRE(in.containers.size() == 1);
  CHECK(in.containers[0].requests == la::ResourceList{{"cpu", 1500}, {"memory", kGi}});
  CHECK(in.containers[0].limits == la::ResourceList{{"kubernetes.io/batch-cpu", 2000}});
  REQUIRE(in.init_containers.size() == 2);
  CHECK(in.init_containers[0].restartable);
  CHECK(in.init_containers[0].resources.requests.at("cpu") == 100);
  CHECK_FALSE(in.init_containers[1].restartable);
  CHECK(in.overhead == la::ResourceList{{"cpu", 250}});
  REQUIRE(in.pod_level_resources.has_value());
  CHECK(in.pod_level_resources->limits.at("memory") == 4 * kGi);
  CHECK(in.phase == la::PodPhase::kRunning);
  CHECK(in.qos_class == "BestEffort");
}

TEST_CASE("pod input reads a plain pod as Koordinator does") {
  const la::PodInput in = PodInputFrom(DecodePod(R"({"metadata":{"name":"p",
      "labels":{"app":"web"},"annotations":{"scheduling.koordinator.sh/reserve-pod":"True"},
      "ownerReferences":[{"kind":"ReplicaSet","name":"rs","controller":true}]}})"));
  CHECK_FALSE(in.priority_class_label.has_value());
  CHECK_FALSE(in.qos_class_label.has_value());
  CHECK_FALSE(in.owned_by_daemonset);
  CHECK_FALSE(in.reserve_pod);  // only "true" marks a reserve pod
  CHECK_FALSE(in.custom_scaling_factors.has_value());
  CHECK_FALSE(in.priority.has_value());
  CHECK_FALSE(in.pod_level_resources.has_value());
  CHECK(in.phase == la::PodPhase::kPending);  // no phase yet
  CHECK_FALSE(in.scheduled_time.has_value());
}

TEST_CASE("pod input maps every phase") {
  const std::vector<std::pair<std::string, la::PodPhase>> phases = {
      {"Pending", la::PodPhase::kPending},     {"Running", la::PodPhase::kRunning},
      {"Succeeded", la::PodPhase::kSucceeded}, {"Failed", la::PodPhase::kFailed},
      {"Unknown", la::PodPhase::kUnknown},     {"", la::PodPhase::kPending}};
  for (const auto& [phase, want] : phases) {
    CHECK(PodInputFrom(DecodePod(R"({"status":{"phase":")" + phase + R"("}})")).phase == want);
  }
}

TEST_CASE("pod input takes scheduled and initialized times from True conditions only") {
  const la::PodInput in = PodInputFrom(DecodePod(R"({"status":{"conditions":[
      {"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:10:00Z"},
      {"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T01:00:00.25+01:00"},
      {"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T09:00:00Z"},
      {"type":"Initialized","status":"True","lastTransitionTime":"2026-01-01T00:00:05Z"}]}})"));
  // The first condition of a type counts (podutil.GetPodCondition); offsets and fractions too.
  REQUIRE(in.scheduled_time.has_value());
  CHECK(*in.scheduled_time == At(1'767'225'600, 250'000'000));
  CHECK(in.initialized_time == At(1'767'225'605));

  const la::PodInput other = PodInputFrom(DecodePod(R"({"status":{"conditions":[
      {"type":"PodScheduled","status":"False","lastTransitionTime":"2026-01-01T00:00:00Z"},
      {"type":"Initialized","status":"True","lastTransitionTime":"0001-01-01T00:00:00Z"}]}})"));
  CHECK_FALSE(other.scheduled_time.has_value());    // not True
  CHECK_FALSE(other.initialized_time.has_value());  // Go's zero time
  const la::PodInput null_time = PodInputFrom(DecodePod(
      R"({"status":{"conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":null}]}})"));
  CHECK_FALSE(null_time.scheduled_time.has_value());
}

TEST_CASE("pod input drops a scaling factor annotation that does not parse and says why") {
  for (const char* text : {R"({\"cpu\":\"90\"})", R"([90])", R"({\"cpu\":9)"}) {
    Warnings warnings;
    const la::PodInput in = PodInputFrom(
        DecodePod(
            R"({"metadata":{"name":"p","annotations":{"scheduling.koordinator.sh/load-estimated-scaling-factors":")" +
            std::string(text) + R"("}}})"),
        &warnings);
    INFO(text);
    CHECK_FALSE(in.custom_scaling_factors.has_value());
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0],
               Contains("annotation scheduling.koordinator.sh/load-estimated-scaling-factors: "));
  }
  Warnings warnings;
  PodInputFrom(
      DecodePod(
          R"({"metadata":{"annotations":{"scheduling.koordinator.sh/load-estimated-scaling-factors":"{\"cpu\":\"90\"}"}}})"),
      &warnings);
  CHECK(warnings.at(0) ==
        "annotation scheduling.koordinator.sh/load-estimated-scaling-factors: cpu: expected an "
        "int64, got \"90\"");
  // "null" is no factors at all, as json.Unmarshal leaves the map nil.
  Warnings none;
  CHECK_FALSE(
      PodInputFrom(
          DecodePod(
              R"({"metadata":{"annotations":{"scheduling.koordinator.sh/load-estimated-scaling-factors":"null"}}})"),
          &none)
          .custom_scaling_factors.has_value());
  CHECK(none.empty());
}

TEST_CASE("node input reads raw allocatable and custom usage thresholds") {
  const extender::Node node = DecodeNode(R"({"metadata":{"name":"n1","annotations":{
      "node.koordinator.sh/raw-allocatable":"{\"cpu\":\"28\",\"memory\":\"32Gi\"}",
      "scheduling.koordinator.sh/usage-thresholds":"{\"usageThresholds\":{\"cpu\":60},\"ProdUsageThresholds\":{\"memory\":70},\"aggregatedUsage\":{\"usageThresholds\":{\"cpu\":50},\"usageAggregationType\":\"p95\",\"usageAggregatedDuration\":\"5m\",\"future\":1}}"}},
    "status":{"allocatable":{"cpu":"32","memory":"42Gi","pods":"110"}}})");
  Warnings warnings;
  const la::NodeInput in = NodeInputFrom(node, &warnings);
  CHECK(warnings.empty());
  CHECK(in.name == "n1");
  CHECK(in.allocatable == la::ResourceList{{"cpu", 32000}, {"memory", 42 * kGi}, {"pods", 110}});
  REQUIRE(in.raw_allocatable.has_value());
  CHECK(*in.raw_allocatable == la::ResourceList{{"cpu", 28000}, {"memory", 32 * kGi}});
  REQUIRE(in.custom_usage_thresholds.has_value());
  const la::CustomUsageThresholds& t = *in.custom_usage_thresholds;
  CHECK(t.usage_thresholds == std::map<std::string, int64_t>{{"cpu", 60}});
  CHECK(t.prod_usage_thresholds == std::map<std::string, int64_t>{{"memory", 70}});
  REQUIRE(t.aggregated_usage.has_value());
  CHECK(t.aggregated_usage->usage_thresholds == std::map<std::string, int64_t>{{"cpu", 50}});
  CHECK(t.aggregated_usage->usage_aggregation_type == "p95");
  CHECK(t.aggregated_usage->usage_aggregated_duration == std::chrono::minutes(5));
}

TEST_CASE("node input counts annotations that do not parse and leaves them absent") {
  const extender::Node node = DecodeNode(R"({"metadata":{"name":"n1","annotations":{
      "node.koordinator.sh/raw-allocatable":"{\"cpu\":\"lots\"}",
      "scheduling.koordinator.sh/usage-thresholds":"{\"aggregatedUsage\":{\"usageAggregatedDuration\":\"5 minutes\"}}"}},
    "status":{"allocatable":{"cpu":"32"}}})");
  Warnings warnings;
  const la::NodeInput in = NodeInputFrom(node, &warnings);
  CHECK_FALSE(in.raw_allocatable.has_value());
  CHECK_FALSE(in.custom_usage_thresholds.has_value());
  REQUIRE(warnings.size() == 2);
  CHECK_THAT(warnings[0], Contains("annotation node.koordinator.sh/raw-allocatable: cpu: "
                                   "\"lots\" is not a quantity"));
  CHECK_THAT(warnings[1], Contains("annotation scheduling.koordinator.sh/usage-thresholds: "
                                   "aggregatedUsage.usageAggregatedDuration: "));
}

TEST_CASE("node metric input leaves koordlet's cold start aggregates absent") {
  const NodeMetric metric = DecodeMetric(qrm::testing::ReadFile(
      std::string(QRM_OBJECTS_GOLDEN) + "/nodemetric-koordlet-coldstart.json"));
  StatusOr<la::NodeMetricInput> in = NodeMetricInputFrom(metric);
  REQUIRE(in.ok());
  CHECK(in->node_name == "node-b");
  REQUIRE(in->node_metric.has_value());
  CHECK(in->node_metric->node_usage == la::ResourceList{{"cpu", 1000}, {"memory", 2 * kGi}});
  CHECK(in->node_metric->system_usage.empty());
  // {"avg": {}, "p50": {}, ...} over 30m: no usage, so no entry (never zero usage).
  CHECK(in->node_metric->aggregated_node_usages.empty());
  CHECK(in->update_time == At(1'795'685'400));
  CHECK_FALSE(in->report_interval_seconds.has_value());
}

TEST_CASE("node metric input keeps the types that have usage") {
  const NodeMetric metric = DecodeMetric(R"({"metadata":{"name":"n1"},
    "spec":{"metricCollectPolicy":{"reportIntervalSeconds":30}},
    "status":{"updateTime":"2026-01-01T00:00:00Z",
      "nodeMetric":{"nodeUsage":{"resources":{"cpu":"10","memory":"20Gi"}},
        "systemUsage":{"resources":{"cpu":"1","memory":"1Gi"}},
        "aggregatedNodeUsages":[
          {"usage":{"avg":{"resources":{"cpu":"5","memory":"10Gi"}},"p95":{}},"duration":"5m0s"},
          {"usage":{},"duration":"10m0s"},
          {"usage":{"p95":{"resources":{"cpu":"9","memory":"1Gi"}}},"duration":"0s"},
          {"usage":{"p99":{"resources":{"cpu":"9","memory":"1Gi"}}},"duration":"1h0m0s"}]},
      "podsMetric":[{"namespace":"default","name":"web","priority":"koord-prod",
                     "podUsage":{"resources":{"cpu":"500m","memory":"1Gi"}}}]}})");
  StatusOr<la::NodeMetricInput> in = NodeMetricInputFrom(metric);
  REQUIRE(in.ok());
  CHECK(in->report_interval_seconds == 30);
  const auto& agg = in->node_metric->aggregated_node_usages;
  REQUIRE(agg.size() == 2);
  CHECK(agg[0].duration == std::chrono::minutes(5));
  CHECK(agg[0].usage.size() == 1);
  CHECK(agg[0].usage.at("avg") == la::ResourceList{{"cpu", 5000}, {"memory", 10 * kGi}});
  CHECK(agg[1].duration == std::chrono::hours(1));
  CHECK(in->node_metric->system_usage.at("cpu") == 1000);
  REQUIRE(in->pods_metric.size() == 1);
  CHECK(in->pods_metric[0].namespace_ == "default");
  CHECK(in->pods_metric[0].priority == "koord-prod");
  CHECK(in->pods_metric[0].usage.at("cpu") == 500);
}

TEST_CASE("node metric input refuses what has no node or no time") {
  NodeMetric nameless;
  CHECK(NodeMetricInputFrom(nameless).status().message() ==
        "NodeMetric metadata.name is empty: no node to apply it to");
  NodeMetric far;
  far.metadata.name = "n1";
  far.status.update_time = int64_t{1} << 40;
  CHECK_THAT(NodeMetricInputFrom(far).status().message(),
             Contains("NodeMetric n1 status.updateTime 1099511627776 is outside the years"));
  // No updateTime at all is Koordinator's expired metric, judged by the core.
  NodeMetric untimed;
  untimed.metadata.name = "n1";
  StatusOr<la::NodeMetricInput> in = NodeMetricInputFrom(untimed);
  REQUIRE(in.ok());
  CHECK_FALSE(in->update_time.has_value());
}

TEST_CASE("kube times keep their fraction and refuse what a TimePoint cannot hold") {
  CHECK(*ParseKubeTime("1970-01-01T00:00:01.123456789123Z") == At(1, 123'456'789));
  CHECK(*ParseKubeTime("1969-12-31T23:59:59.5Z") == At(-1, 500'000'000));
  CHECK_THAT(ParseKubeTime("1600-01-01T00:00:00Z").status().message(),
             Contains("\"1600-01-01T00:00:00Z\" is outside the years 1678-2262"));
  CHECK_FALSE(ParseKubeTime("noon").ok());
}

TEST_CASE("quantities convert to the core's units and saturate") {
  StatusOr<Quantity> huge = Quantity::Parse("1e30");
  REQUIRE(huge.ok());
  const la::ResourceList list = ToLoadAwareList({{"cpu", *Quantity::Parse("1.5")},
                                                 {"memory", *Quantity::Parse("1Ki")},
                                                 {"nvidia.com/gpu", *huge}});
  CHECK(list.at("cpu") == 1500);
  CHECK(list.at("memory") == 1024);
  CHECK(list.at("nvidia.com/gpu") == std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace qrm::cluster::scheduler
