// NodeReporter: the NodeMetric built from a fake node's samples, served locally and written to
// the in-process API server (real REST paths, resourceVersion, the status subresource).
#include "advisor/agent/node_reporter.h"

#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "cluster/objects/node_metric_json.h"
#include "cluster/objects/node_resource_topology.h"
#include "testing/kube/node_status_store.h"
#include "testing/kube/object_collection.h"
#include "testing/kube/test_api_server.h"
#include "tests/unit/advisor/agent/fake_node.h"

namespace qrm::advisor {
namespace {

constexpr int64_t kT0 = 1'800'000'000;
constexpr int64_t kSecond = 1'000'000'000;

// A 4-CPU node running web (shared_cores, 1 core) and batch (reclaimed_cores, 0.5 core).
struct ReportNode {
  fake::Tree tree;
  std::vector<TrackedContainer> running{fake::Container("web", "app"),
                                        fake::Container("batch", "job")};
  HostView view;
  std::unique_ptr<Agent> agent;
  double web_seconds = 0, batch_seconds = 0;
  int64_t t = 0;

  ReportNode() {
    view.containers["web-uid/app"] = {"web", "default", "shared_cores", ""};
    view.containers["batch-uid/job"] = {"batch", "default", "reclaimed_cores", ""};
    agent = fake::MakeAgent(tree, &view, &running);
  }
  void Tick() {
    web_seconds += 1.0;
    batch_seconds += 0.5;
    tree.SetContainer("/kubepods/podweb/app", web_seconds, 256 << 20);
    tree.SetContainer("/kubepods/podbatch/job", batch_seconds, 128 << 20);
    tree.SetNode(2.0 * static_cast<double>(t + 1), 4.0 * static_cast<double>(t + 1), 1ULL << 30);
    agent->Tick(kT0 + t, (t + 1) * kSecond);
    ++t;
  }
  int64_t now() const { return kT0 + t - 1; }
};

kube::KubeClient ClientFor(const testing::TestApiServer& server) {
  kube::ClusterConfig config;
  config.server = server.url();
  config.token = "test-token";
  auto client = kube::KubeClient::Create(config);
  REQUIRE(client.ok());
  return std::move(*client);
}

NodeReporterOptions Options() {
  NodeReporterOptions o;
  o.node_name = "node-a";
  return o;
}

TEST_CASE("the node report is built from the samples and served as a NodeMetric") {
  ReportNode node;
  NodeReporter reporter(Options(), std::nullopt);
  CHECK(reporter.Json().empty());
  for (int i = 0; i < 20; ++i) {
    node.Tick();
    reporter.Tick(*node.agent, node.now());
  }
  auto m = cluster::DecodeNodeMetric(reporter.Json());
  REQUIRE(m.ok());
  CHECK(m->metadata.name == "node-a");
  REQUIRE(m->status.node_metric);
  // 2 of 4 CPUs busy, 1 GiB used (the first tick has no CPU rate yet: the average is of the
  // others).
  CHECK(m->status.node_metric->node_usage.resources.at("cpu").MilliValue() == 2000);
  CHECK(m->status.node_metric->node_usage.resources.at("memory").Value() == 1LL << 30);
  REQUIRE(m->status.pods_metric.size() == 2);
  CHECK(m->status.pods_metric[0].name == "batch");
  CHECK(m->status.pods_metric[0].qos == "BE");
  CHECK(m->status.pods_metric[0].pod_usage.resources.at("cpu").MilliValue() == 500);
  CHECK(m->status.pods_metric[0].pod_usage.resources.at("memory").Value() == 128 << 20);
  CHECK(m->status.pods_metric[1].priority == "koord-prod");
  CHECK(m->status.node_metric->aggregated_node_usages.empty());  // 20 s of 5 minutes: cold
  // At the second tick (the first has no CPU rate yet: nothing to report) and 10 s later.
  CHECK(reporter.counters().built == 2);
}

TEST_CASE("the node report is written to the API server and rewritten on schedule") {
  testing::TestApiServer server;
  testing::ObjectCollection metrics(server, {cluster::kNodeMetricsPath, cluster::kNodeMetricKind,
                                             cluster::kNodeMetricApiVersion, true});
  REQUIRE(server.Start().ok());
  auto client = ClientFor(server);
  ReportNode node;
  NodeReporter reporter(Options(), std::move(client));
  auto wait_writes = [&](uint64_t n) {
    for (int i = 0; i < 500 && reporter.counters().node_metric.ok < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return reporter.counters().node_metric.ok >= n;
  };
  node.Tick();
  node.Tick();
  reporter.Tick(*node.agent, node.now());
  REQUIRE(wait_writes(1));
  auto stored = metrics.Get("node-a");
  REQUIRE(stored);
  auto m = cluster::DecodeNodeMetric(*stored);
  REQUIRE(m.ok());
  CHECK(m->metadata.labels.at("app.kubernetes.io/managed-by") == "qrm-advisor");
  CHECK(m->status.update_time == node.now());
  CHECK(m->status.pods_metric.size() == 2);
  // Within the interval and no change: built, not written.
  for (int i = 0; i < 30; ++i) {
    node.Tick();
    reporter.Tick(*node.agent, node.now());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(reporter.counters().node_metric.ok == 1);
  // A failed write is retried at the next check (10 s later), not a whole interval later.
  metrics.FailWrites(500, 1);
  while (node.now() < kT0 + 61) {  // the interval since the first write (at kT0 + 1)
    node.Tick();
    reporter.Tick(*node.agent, node.now());
  }
  for (int i = 0; i < 500 && reporter.counters().node_metric.failed == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(reporter.counters().node_metric.failed == 1);
  CHECK_THAT(reporter.counters().node_metric.last_error, Catch::Contains("scripted failure"));
  for (int i = 0; i < 10; ++i) {  // to the next check
    node.Tick();
    reporter.Tick(*node.agent, node.now());
  }
  REQUIRE(wait_writes(2));
  CHECK(reporter.counters().node_metric.failed == 1);
  CHECK(reporter.counters().node_metric.last_error.empty());  // cleared by the success
  auto later = cluster::DecodeNodeMetric(*metrics.Get("node-a"));
  REQUIRE(later.ok());
  CHECK(*later->status.update_time > *m->status.update_time);
}

// qrm-host's answers for a one-NUMA-node machine with 4 CPUs, `held` of them held.
HostAnswersSource OneNodeHost(std::shared_ptr<double> held) {
  return [held]() -> StatusOr<HostAnswers> {
    HostAnswers a;
    a.allocatable.set_topology_policy("best-effort");
    a.allocatable.set_topology_scope("pod");
    a.allocatable.add_numa_nodes()->set_id(0);
    auto& cpu = (*a.allocatable.mutable_resources())["cpu"];
    for (auto* list : {cpu.mutable_topology_aware_capacity_quantity_list(),
                       cpu.mutable_topology_aware_allocatable_quantity_list()}) {
      auto* q = list->Add();
      q->set_node(0);
      q->set_resource_value(4);
    }
    auto* c = a.allocations.add_pods()->add_containers();
    c->set_qos_level("dedicated_cores");  // its CPUs are its own, not a shared pool's
    (*(*c->mutable_resources())["cpu"].mutable_topology_assignments())[0] =
        static_cast<uint64_t>(*held);
    return a;
  };
}

TEST_CASE("the topology is written when it changes and kept when qrm-host cannot answer") {
  testing::TestApiServer server;
  testing::ObjectCollection topologies(
      server, {cluster::kNrtPath, cluster::kNrtKind, cluster::kNrtApiVersion, false});
  testing::ObjectCollection metrics(server, {cluster::kNodeMetricsPath, cluster::kNodeMetricKind,
                                             cluster::kNodeMetricApiVersion, true});
  REQUIRE(server.Start().ok());
  auto client = ClientFor(server);
  auto held = std::make_shared<double>(1);
  auto failing = std::make_shared<bool>(false);
  HostAnswersSource answers = OneNodeHost(held);
  ReportNode node;
  NodeReporter reporter(Options(), std::move(client),
                        [answers, failing]() -> StatusOr<HostAnswers> {
                          if (*failing) return UnavailableError("qrm-host admin socket: down");
                          return answers();
                        });
  auto wait_topology_writes = [&](uint64_t n) {
    for (int i = 0; i < 500 && reporter.counters().topology.ok < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return reporter.counters().topology.ok >= n;
  };
  auto available = [&] {
    auto nrt = cluster::DecodeNodeResourceTopology(*topologies.Get("node-a"));
    REQUIRE(nrt.ok());
    return nrt->zones.at(0).resources.at(0).available.ToString();
  };
  node.Tick();
  reporter.Tick(*node.agent, node.now());
  REQUIRE(wait_topology_writes(1));
  CHECK(available() == "3");
  CHECK(reporter.counters().topology.ok == 1);  // created with everything: no second write
  // Unchanged: not written again at the next check.
  for (int i = 0; i < 10; ++i) {
    node.Tick();
    reporter.Tick(*node.agent, node.now());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(reporter.counters().topology.ok == 1);
  // qrm-host down: the last topology is kept and nothing is written from what was not read.
  *failing = true;
  for (int i = 0; i < 10; ++i) {
    node.Tick();
    reporter.Tick(*node.agent, node.now());
  }
  CHECK_THAT(reporter.topology_error(), Catch::Contains("qrm-host admin socket"));
  CHECK_FALSE(reporter.TopologyJson().empty());
  // Back, with one more CPU held: written at once.
  *failing = false;
  *held = 2;
  for (int i = 0; i < 10; ++i) {
    node.Tick();
    reporter.Tick(*node.agent, node.now());
  }
  REQUIRE(wait_topology_writes(2));
  CHECK(available() == "2");
  CHECK(reporter.topology_error().empty());
}

TEST_CASE("plugin resources are kept on the node as extended resources") {
  testing::TestApiServer server;
  testing::ObjectCollection topologies(
      server, {cluster::kNrtPath, cluster::kNrtKind, cluster::kNrtApiVersion, false});
  testing::ObjectCollection metrics(server, {cluster::kNodeMetricsPath, cluster::kNodeMetricKind,
                                             cluster::kNodeMetricApiVersion, true});
  testing::NodeStatusStore nodes(server);
  nodes.Put("node-a", R"({"metadata":{"name":"node-a"},"status":{"capacity":{"cpu":"4"}}})");
  REQUIRE(server.Start().ok());
  auto widgets = std::make_shared<double>(4);
  HostAnswersSource cpus = OneNodeHost(std::make_shared<double>(1));
  ReportNode node;
  NodeReporter reporter(Options(), ClientFor(server), [cpus, widgets]() -> StatusOr<HostAnswers> {
    StatusOr<HostAnswers> a = cpus();
    auto& resources = *a->allocatable.mutable_resources();
    resources["example.com/widget"].set_aggregated_allocatable_quantity(*widgets);
    resources["Not.Valid/x"].set_aggregated_allocatable_quantity(1);  // logged, skipped
    return a;
  });
  auto wait = [&](auto done) {
    for (int i = 0; i < 500 && !done(reporter.counters().extended_resources); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done(reporter.counters().extended_resources);
  };
  auto ten_ticks = [&] {
    for (int i = 0; i < 10; ++i) {
      node.Tick();
      reporter.Tick(*node.agent, node.now());
    }
  };
  node.Tick();
  reporter.Tick(*node.agent, node.now());
  REQUIRE(wait([](const ObjectWrites& w) { return w.ok == 1; }));
  CHECK_THAT(*nodes.Get("node-a"), Catch::Contains(R"("example.com/widget":"4")") &&
                                       !Catch::Contains("Not.Valid") &&
                                       Catch::Contains(R"("cpu":"4")"));
  CHECK(reporter.counters().published == std::set<std::string>{"example.com/widget"});
  // The API server fails the next check; the one after patches the changed figure.
  *widgets = 3;
  nodes.FailRequests(503, 1);
  ten_ticks();
  REQUIRE(wait([](const ObjectWrites& w) { return w.failed == 1; }));
  CHECK_THAT(reporter.counters().extended_resources.last_error, Catch::Contains("503"));
  ten_ticks();
  REQUIRE(wait([](const ObjectWrites& w) { return w.ok == 2; }));
  CHECK(reporter.counters().extended_resources.last_error.empty());
  CHECK_THAT(*nodes.Get("node-a"), Catch::Contains(R"("example.com/widget":"3")"));
  // Every check reads the node; an unchanged one is not patched.
  const int gets = nodes.gets();
  ten_ticks();
  for (int i = 0; i < 500 && nodes.gets() == gets; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(nodes.gets() > gets);
  CHECK(nodes.patches().size() == 2);
}

}  // namespace
}  // namespace qrm::advisor
