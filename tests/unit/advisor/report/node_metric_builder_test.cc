// The NodeMetric status from a metric store filled with known samples: every figure is
// computed by hand from what was put in.
#include "advisor/report/node_metric_builder.h"

#include <catch2/catch.hpp>

#include "cluster/objects/node_metric_json.h"

namespace qrm::advisor {
namespace {

constexpr int64_t kStart = 1'800'000'000;
constexpr double kGiB = 1024.0 * 1024 * 1024;

NodeReportInput Input(int64_t now) {
  NodeReportInput in;
  in.node_name = "node-a";
  in.now = now;
  in.node_cpu_series = "node/cpu";
  in.node_memory_series = "node/memory";
  in.system_cpu_series = "system/cpu";
  in.system_memory_series = "system/memory";
  return in;
}

// `seconds` samples, one a second ending at kStart + seconds - 1: the node at 1 core for the
// first half and 3 cores for the second, 2 GiB, the system at a quarter core and 512 MiB.
MetricStore Filled(int64_t seconds) {
  MetricStore store{StoreOptions{}};
  for (int64_t i = 0; i < seconds; ++i) {
    const int64_t t = kStart + i;
    store.Add("node/cpu", t, i < seconds / 2 ? 1.0 : 3.0);
    store.Add("node/memory", t, 2 * kGiB);
    store.Add("system/cpu", t, 0.25);
    store.Add("system/memory", t, 0.5 * kGiB);
  }
  return store;
}

std::string Cpu(const cluster::ResourceMap& m) {
  return m.resources.at("cpu").ToString();
}
std::string Memory(const cluster::ResourceMap& m) {
  return m.resources.at("memory").ToString();
}

TEST_CASE("node and system usage are the window's average") {
  const MetricStore store = Filled(200);
  auto status = BuildNodeMetric(store, Input(kStart + 199), NodeReportOptions{});
  REQUIRE(status);
  CHECK(status->update_time == kStart + 199);
  const auto& info = *status->node_metric;
  CHECK(Cpu(info.node_usage) == "2");  // (100 x 1 + 100 x 3) / 200
  CHECK(Memory(info.node_usage) == "2Gi");
  CHECK(Cpu(info.system_usage) == "250m");
  CHECK(Memory(info.system_usage) == "512Mi");
}

TEST_CASE("an aggregate is reported only once half its window is covered") {
  SECTION("149 s: the 5 minute window is cold") {
    auto status = BuildNodeMetric(Filled(149), Input(kStart + 148), NodeReportOptions{});
    REQUIRE(status);
    CHECK(status->node_metric->aggregated_node_usages.empty());
    CHECK(status->node_metric->aggregated_system_usages.empty());
  }
  SECTION("200 s: 5 minutes reported with its percentiles, 10 and 30 minutes not yet") {
    auto status = BuildNodeMetric(Filled(200), Input(kStart + 199), NodeReportOptions{});
    REQUIRE(status);
    const auto& aggregated = status->node_metric->aggregated_node_usages;
    REQUIRE(aggregated.size() == 1);
    CHECK(aggregated[0].duration_ns == 300'000'000'000);
    CHECK(Cpu(aggregated[0].usage.at("avg")) == "2");
    CHECK(Cpu(aggregated[0].usage.at("p50")) == "1");  // nearest rank 100 of 200: still 1 core
    CHECK(Cpu(aggregated[0].usage.at("p90")) == "3");
    CHECK(Cpu(aggregated[0].usage.at("p99")) == "3");
    CHECK(Memory(aggregated[0].usage.at("p95")) == "2Gi");
    REQUIRE(status->node_metric->aggregated_system_usages.size() == 1);
    CHECK(Cpu(status->node_metric->aggregated_system_usages[0].usage.at("avg")) == "250m");
  }
}

TEST_CASE("pods are their containers' sums with Koordinator's classes in name order") {
  MetricStore store = Filled(60);
  for (int64_t i = 0; i < 60; ++i) {
    store.Add("u1/a/cpu", kStart + i, 0.5);
    store.Add("u1/b/cpu", kStart + i, 0.25);
    store.Add("u1/a/memory", kStart + i, 1 * kGiB);
    store.Add("u1/b/memory", kStart + i, 0.5 * kGiB);
    store.Add("u2/main/cpu", kStart + i, 1.5);
    store.Add("u2/main/memory", kStart + i, 0.25 * kGiB);
  }
  NodeReportInput in = Input(kStart + 59);
  in.pods = {
      {"web", "shop", "shared_cores", {"u1/a/cpu", "u1/b/cpu"}, {"u1/a/memory", "u1/b/memory"}},
      {"batch", "default", "reclaimed_cores", {"u2/main/cpu"}, {"u2/main/memory"}},
      {"new", "default", "dedicated_cores", {"u3/main/cpu"}, {"u3/main/memory"}}};
  auto status = BuildNodeMetric(store, in, NodeReportOptions{});
  REQUIRE(status);
  REQUIRE(status->pods_metric.size() == 2);  // "new" has no sample yet: left out
  const auto& batch = status->pods_metric[0];
  CHECK(batch.namespace_ == "default");
  CHECK(batch.priority == "koord-batch");
  CHECK(batch.qos == "BE");
  CHECK(Cpu(batch.pod_usage) == "1500m");
  CHECK(Memory(batch.pod_usage) == "256Mi");
  const auto& web = status->pods_metric[1];
  CHECK(web.name == "web");
  CHECK(web.priority == "koord-prod");
  CHECK(web.qos == "LS");
  CHECK(Cpu(web.pod_usage) == "750m");
  CHECK(Memory(web.pod_usage) == "1536Mi");
}

TEST_CASE("the predictions give the prod reclaimable and peak") {
  NodeReportInput in = Input(kStart + 59);
  in.cpu_capacity = 8;
  in.memory_capacity = 16 * kGiB;
  SECTION("before the first prediction: an empty reclaimable and no peak, as koordlet") {
    auto status = BuildNodeMetric(Filled(60), in, NodeReportOptions{});
    REQUIRE(status);
    REQUIRE(status->prod_reclaimable_metric);
    CHECK(status->prod_reclaimable_metric->resources.empty());
    CHECK_FALSE(status->prod_peak_metric);
  }
  SECTION("with a CPU prediction") {
    in.cpu.known = true;
    in.cpu.peak = 6.5;
    in.memory.known = true;
    in.memory.peak = 20 * kGiB;  // above the capacity: nothing reclaimable
    auto status = BuildNodeMetric(Filled(60), in, NodeReportOptions{});
    REQUIRE(status);
    CHECK(Cpu(*status->prod_reclaimable_metric) == "1500m");
    CHECK(Memory(*status->prod_reclaimable_metric) == "0");
    CHECK(Cpu(*status->prod_peak_metric) == "6500m");
    CHECK(Memory(*status->prod_peak_metric) == "20Gi");
  }
}

TEST_CASE("nothing is reported before the node has a sample in the window") {
  MetricStore empty{StoreOptions{}};
  CHECK_FALSE(BuildNodeMetric(empty, Input(kStart), NodeReportOptions{}));
  // Samples older than the window do not count.
  CHECK_FALSE(BuildNodeMetric(Filled(10), Input(kStart + 400), NodeReportOptions{}));
}

TEST_CASE("QoS levels map to Koordinator classes") {
  CHECK(KoordQos("dedicated_cores") == "LSR");
  CHECK(KoordQos("system_cores") == "SYSTEM");
  CHECK(KoordQos("") == "LS");
  CHECK(KoordPriority("") == "koord-prod");
  CHECK(KoordPriority("system_cores") == "koord-prod");
}

}  // namespace
}  // namespace qrm::advisor
