// ExtendedResourcePublisher against the in-process API server's Node store: what it patches,
// what it leaves alone, what it remembers across a restart and how it repairs a node the
// kubelet rewrote.
#include "advisor/agent/extended_resource_publisher.h"

#include <catch2/catch.hpp>

#include "testing/kube/node_status_store.h"
#include "testing/kube/test_api_server.h"
#include "testing/temp_dir.h"

namespace qrm::advisor {
namespace {

// The node as the kubelet registered it, with a device plugin's GPUs.
const char* const kNode =
    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"},)"
    R"("status":{"capacity":{"cpu":"8","memory":"32Gi","nvidia.com/gpu":"2"},)"
    R"("allocatable":{"cpu":"7","memory":"30Gi","nvidia.com/gpu":"2"}}})";

struct Cluster {
  testing::TestApiServer server;
  testing::NodeStatusStore nodes{server};
  testing::TempDir dir;
  std::optional<kube::KubeClient> client;

  Cluster() {
    nodes.Put("node-a", kNode);
    REQUIRE(server.Start().ok());
    kube::ClusterConfig config;
    config.server = server.url();
    config.token = "test-token";
    auto made = kube::KubeClient::Create(config);
    REQUIRE(made.ok());
    client = std::move(*made);
  }
  std::unique_ptr<ExtendedResourcePublisher> Publisher() {
    return std::make_unique<ExtendedResourcePublisher>(*client, "node-a",
                                                       dir.File("state/extended.json"));
  }
  std::string Node() const { return *nodes.Get("node-a"); }
};

cluster::ExtendedResources Offer(std::map<std::string, int64_t> amounts) {
  cluster::ExtendedResources out;
  for (const auto& [name, n] : amounts) {
    const auto q = Quantity::FromInt(n, QuantityFormat::kDecimalSI);
    out[name] = {q, q};
  }
  return out;
}

TEST_CASE("plugin resources are added and changed on the node status") {
  Cluster c;
  auto p = c.Publisher();
  auto first = p->Check(Offer({{"qrm.io/nic", 2}, {"example.com/widget", 4}}));
  REQUIRE(first.ok());
  CHECK(first->patched);
  CHECK(first->added == std::vector<std::string>{"example.com/widget", "qrm.io/nic"});
  REQUIRE(c.nodes.patches().size() == 1);
  CHECK(c.nodes.patches()[0].content_type == "application/json-patch+json");
  CHECK(c.nodes.patches()[0].code == 200);
  CHECK_THAT(c.Node(), Catch::Contains(R"("qrm.io/nic":"2")") &&
                           Catch::Contains(R"("example.com/widget":"4")") &&
                           Catch::Contains(R"("nvidia.com/gpu":"2")"));
  // In step: read, nothing sent.
  auto same = p->Check(Offer({{"qrm.io/nic", 2}, {"example.com/widget", 4}}));
  REQUIRE(same.ok());
  CHECK_FALSE(same->patched);
  CHECK(c.nodes.patches().size() == 1);
  // A widget taken for the plugin's own use: the allocatable changes.
  auto changed = p->Check(Offer({{"qrm.io/nic", 2}, {"example.com/widget", 3}}));
  REQUIRE(changed.ok());
  CHECK(changed->changed == std::vector<std::string>{"example.com/widget"});
  CHECK(c.nodes.patches().back().body ==
        R"([{"op":"replace","path":"/status/capacity/example.com~1widget","value":"3"},)"
        R"({"op":"replace","path":"/status/allocatable/example.com~1widget","value":"3"}])");
}

TEST_CASE("a plugin that leaves has its resource removed and a device plugin's is kept") {
  Cluster c;
  auto p = c.Publisher();
  REQUIRE(p->Check(Offer({{"qrm.io/nic", 2}, {"example.com/widget", 4}})).ok());
  auto left = p->Check(Offer({{"qrm.io/nic", 2}}));
  REQUIRE(left.ok());
  CHECK(left->removed == std::vector<std::string>{"example.com/widget"});
  CHECK(p->published() == std::set<std::string>{"qrm.io/nic"});
  CHECK_THAT(c.Node(), !Catch::Contains("example.com/widget"));
  // Everything gone: only what qrm published goes; the GPUs stay.
  REQUIRE(p->Check({}).ok());
  CHECK_THAT(c.Node(), !Catch::Contains("qrm.io/nic") && Catch::Contains("nvidia.com/gpu"));
  CHECK(p->published().empty());
}

TEST_CASE("a restarted publisher removes what it published before it stopped") {
  Cluster c;
  REQUIRE(c.Publisher()->Check(Offer({{"example.com/widget", 4}})).ok());
  // The plugin left while the advisor was down; a new publisher reads the state file.
  auto restarted = c.Publisher();
  CHECK(restarted->published() == std::set<std::string>{"example.com/widget"});
  auto check = restarted->Check({});
  REQUIRE(check.ok());
  CHECK(check->removed == std::vector<std::string>{"example.com/widget"});
  // A publisher for another node name, or without the file, never removes it.
  REQUIRE(c.nodes
              .Apply("node-a", R"([{"op":"add","path":"/status/capacity/example.com~1widget",)"
                               R"("value":"4"}])")
              .ok());
  ExtendedResourcePublisher memoryless(*c.client, "node-a", "");
  auto nothing = memoryless.Check({});
  REQUIRE(nothing.ok());
  CHECK_FALSE(nothing->patched);
  CHECK_THAT(c.Node(), Catch::Contains("example.com/widget"));
}

TEST_CASE("a resource the kubelet zeroed is patched again at the next check") {
  Cluster c;
  auto p = c.Publisher();
  REQUIRE(p->Check(Offer({{"example.com/widget", 4}})).ok());
  // reconcileExtendedResource after the kubelet re-registered the node.
  REQUIRE(
      c.nodes
          .Apply(
              "node-a",
              R"([{"op":"replace","path":"/status/capacity/example.com~1widget","value":"0"},)"
              R"({"op":"replace","path":"/status/allocatable/example.com~1widget","value":"0"}])")
          .ok());
  auto repaired = p->Check(Offer({{"example.com/widget", 4}}));
  REQUIRE(repaired.ok());
  CHECK(repaired->changed == std::vector<std::string>{"example.com/widget"});
  CHECK_THAT(c.Node(), Catch::Contains(R"("example.com/widget":"4")") &&
                           !Catch::Contains(R"("example.com/widget":"0")"));
}

TEST_CASE("API errors are returned with the server's answer and the next check retries") {
  Cluster c;
  auto p = c.Publisher();
  c.nodes.FailRequests(500, 1);  // the GET
  auto failed = p->Check(Offer({{"example.com/widget", 4}}));
  CHECK(failed.status().code() == StatusCode::kInternal);
  CHECK_THAT(failed.status().message(), Catch::Contains("GET") &&
                                            Catch::Contains("/api/v1/nodes/node-a") &&
                                            Catch::Contains("scripted failure"));
  CHECK(c.nodes.patches().empty());
  auto unknown = ExtendedResourcePublisher(*c.client, "node-b", "").Check({});
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  REQUIRE(p->Check(Offer({{"example.com/widget", 4}})).ok());
  CHECK_THAT(c.Node(), Catch::Contains(R"("example.com/widget":"4")"));
}

TEST_CASE("the desired resources are the plugins' extended resources, whole") {
  admin::v1::GetAllocatableResponse answer;
  auto set = [&](const std::string& name, double allocatable, double capacity) {
    auto& r = (*answer.mutable_resources())[name];
    r.set_aggregated_allocatable_quantity(allocatable);
    r.set_aggregated_capacity_quantity(capacity);
  };
  set("cpu", 7, 8);
  set("memory", 1 << 30, 1 << 30);
  set("qrm.io/nic-bandwidth", 20000.7, 25000);
  set("Bad.Name/x", 1, 1);
  auto& per_node = (*answer.mutable_resources())["example.com/widget"];  // lists only
  for (uint64_t node : {0, 1}) {
    auto* q = per_node.add_topology_aware_allocatable_quantity_list();
    q->set_node(node);
    q->set_resource_value(2);
  }
  std::vector<std::string> skipped;
  cluster::ExtendedResources desired = ExtendedResourcesFrom(answer, &skipped);
  std::sort(skipped.begin(), skipped.end());
  CHECK(skipped == std::vector<std::string>{"Bad.Name/x", "cpu", "memory"});
  REQUIRE(desired.size() == 2);
  CHECK(desired.at("qrm.io/nic-bandwidth").allocatable.ToString() == "20k");
  // The kubelet copies capacity over allocatable: both carry the allocatable amount.
  CHECK(desired.at("qrm.io/nic-bandwidth").capacity.ToString() == "20k");
  CHECK(desired.at("example.com/widget").allocatable.ToString() == "4");
}

}  // namespace
}  // namespace qrm::advisor
