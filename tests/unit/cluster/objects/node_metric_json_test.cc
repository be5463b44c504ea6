// NodeMetric JSON against golden files written from Koordinator's Go types (golden/README.md).
#include "cluster/objects/node_metric_json.h"

#include <catch2/catch.hpp>

#include "tests/unit/cluster/objects/golden_json.h"

namespace qrm::cluster {
namespace {

TEST_CASE("a NodeMetric round-trips byte for byte through the golden file") {
  const std::string golden = Golden("nodemetric.json");
  auto m = DecodeNodeMetric(golden);
  REQUIRE(m.ok());
  CHECK(m->metadata.name == "node-a");
  CHECK(m->metadata.resource_version == "4711");
  REQUIRE(m->collect_policy);
  CHECK(m->collect_policy->report_interval_seconds == 60);
  CHECK(*m->collect_policy->node_aggregate_durations_ns ==
        std::vector<int64_t>{300'000'000'000, 600'000'000'000, 1'800'000'000'000});
  REQUIRE(m->status.node_metric);
  CHECK(m->status.node_metric->node_usage.resources.at("cpu").MilliValue() == 7350);
  CHECK(m->status.node_metric->node_usage.resources.at("memory").Value() == 24LL << 30);
  REQUIRE(m->status.node_metric->aggregated_node_usages.size() == 1);
  CHECK(m->status.node_metric->aggregated_node_usages[0]
            .usage.at("p95")
            .resources.at("cpu")
            .MilliValue() == 9500);
  REQUIRE(m->status.pods_metric.size() == 2);
  CHECK(m->status.pods_metric[1].qos == "LS");
  CHECK(m->status.pods_metric[0].priority == "koord-batch");
  CHECK(m->status.prod_reclaimable_metric->resources.at("cpu").MilliValue() == 3600);
  CHECK(EncodeNodeMetric(*m) == Compact(golden));
}

TEST_CASE("koordlet's cold-start form reads as empty aggregates") {
  const std::string golden = Golden("nodemetric-koordlet-coldstart.json");
  auto m = DecodeNodeMetric(golden);
  REQUIRE(m.ok());
  const auto& aggregated = m->status.node_metric->aggregated_node_usages;
  REQUIRE(aggregated.size() == 1);
  CHECK(aggregated[0].usage.size() == 5);
  CHECK(aggregated[0].usage.at("p99").resources.empty());
  CHECK(m->status.prod_reclaimable_metric->resources.empty());
  CHECK_FALSE(m->metadata.creation_timestamp);
  CHECK(EncodeNodeMetric(*m) == Compact(golden));
}

TEST_CASE("an empty NodeMetric is written as Go writes the zero value") {
  NodeMetric m;
  m.metadata.name = "n";
  CHECK(EncodeNodeMetric(m) ==
        R"({"kind":"NodeMetric","apiVersion":"slo.koordinator.sh/v1alpha1",)"
        R"("metadata":{"name":"n","creationTimestamp":null},"spec":{},"status":{}})");
}

TEST_CASE("a NodeMetric list gives its items and resourceVersion") {
  const std::string item = Golden("nodemetric.json");
  const std::string list = R"({"kind":"NodeMetricList","apiVersion":"slo.koordinator.sh/v1alpha1",)"
                           R"("metadata":{"resourceVersion":"5000"},"items":[)" +
                           item + "," + Golden("nodemetric-koordlet-coldstart.json") + "]}";
  auto decoded = DecodeNodeMetricList(list);
  REQUIRE(decoded.ok());
  CHECK(decoded->resource_version == "5000");
  REQUIRE(decoded->items.size() == 2);
  CHECK(decoded->items[1].metadata.name == "node-b");
}

TEST_CASE("bad NodeMetric JSON is refused naming the field and the value") {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"status":{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"12x"}}}}})",
       "status.nodeMetric.nodeUsage.resources.cpu: \"12x\" is not a quantity"},
      {R"({"status":{"nodeMetric":{"nodeUsage":{"resources":{"cpu":"-2"}}}}})",
       "status.nodeMetric.nodeUsage.resources.cpu: \"-2\" is negative"},
      {R"({"status":{"podsMetric":[{"name":"a"},{"name":7}]}})",
       "status.podsMetric[1].name: a number where a string belongs"},
      {R"({"status":{"updateTime":"yesterday"}})", "status.updateTime: time \"yesterday\""},
      {R"({"status":{"nodeMetric":{"aggregatedNodeUsages":[{"duration":"5 minutes"}]}}})",
       "status.nodeMetric.aggregatedNodeUsages[0].duration: duration \"5 minutes\""},
      {R"({"kind":"Node"})", "kind: \"Node\" where \"NodeMetric\" belongs"},
      {R"({"status":[]})", "status: an array where an object belongs"},
      {R"({"status":{}} trailing)", "not JSON"},
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    auto m = DecodeNodeMetric(text);
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(m.status().message(), Catch::Contains(want));
  }
}

}  // namespace
}  // namespace qrm::cluster
