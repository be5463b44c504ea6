// End to end: three qrm-advisor processes report their node's load (fake procfs) as NodeMetrics
// to the in-process API server; qrm-scheduler-extender watches NodeMetrics, nodes and pods and
// answers kube-scheduler's verbs over HTTP. The test plays kube-scheduler: filter, prioritize,
// pick the best node, bind through the API (the default binder), for a burst of 20 pods.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <rapidjson/document.h>

#include "cluster/extender/extender_codec.h"
#include "cluster/kube/http_client.h"
#include "testing/child_process.h"
#include "testing/free_port.h"
#include "tests/integration/cluster/fake_cluster.h"

namespace qrm::testing {
namespace {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;

// The extender as kube-scheduler calls it.
class ExtenderClient {
 public:
  explicit ExtenderClient(int port) : url_{false, "127.0.0.1", static_cast<uint16_t>(port), ""} {}

  kube::HttpResponse Call(const std::string& method, const std::string& path,
                          const std::string& body = "") const {
    kube::HttpRequest request{method, path, body, {{"Content-Type", "application/json"}}};
    StatusOr<kube::HttpResponse> answer = kube::HttpCall(url_, {}, request, 10s);
    REQUIRE(answer.ok());
    return *answer;
  }
  bool Ready() const {
    kube::HttpRequest request{"GET", "/readyz", "", {}};
    StatusOr<kube::HttpResponse> answer = kube::HttpCall(url_, {}, request, 1s);
    return answer.ok() && answer->status == 200;
  }
  extender::ExtenderFilterResult Filter(const std::string& args) const {
    const kube::HttpResponse answer = Call("POST", "/filter", args);
    REQUIRE(answer.status == 200);
    StatusOr<extender::ExtenderFilterResult> result =
        extender::DecodeExtenderFilterResult(answer.body);
    REQUIRE(result.ok());
    return *result;
  }
  std::map<std::string, int64_t> Prioritize(const std::string& args) const {
    const kube::HttpResponse answer = Call("POST", "/prioritize", args);
    INFO(answer.body);
    REQUIRE(answer.status == 200);
    StatusOr<extender::HostPriorityList> list = extender::DecodeHostPriorityList(answer.body);
    REQUIRE(list.ok());
    std::map<std::string, int64_t> scores;
    for (const extender::HostPriority& p : *list) scores[p.host] = p.score;
    return scores;
  }

 private:
  kube::Url url_;
};

// The pod informer's event count, from /debug/informers.
uint64_t PodEvents(const ExtenderClient& extender) {
  rapidjson::Document doc;
  const std::string body = extender.Call("GET", "/debug/informers").body;
  doc.Parse(body.c_str());
  REQUIRE(doc.IsArray());
  for (const auto& informer : doc.GetArray()) {
    if (std::string_view(informer["resource"].GetString()) == "pods") {
      return informer["events"].GetUint64();
    }
  }
  FAIL("no pods informer in " << body);
  return 0;
}

std::string ArgsWithNames(const std::string& pod, const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "\"" : ",\"") + n + "\"";
  return fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":[{}]}})", pod, list);
}

std::string ArgsWithNodes(const std::string& pod, const std::vector<std::string>& nodes) {
  std::string items;
  for (const std::string& n : nodes) items += (items.empty() ? "" : ",") + n;
  return fmt::format(R"({{"Pod":{},"Nodes":{{"metadata":{{}},"items":[{}]}},"NodeNames":null}})",
                     pod, items);
}

// The pod's metadata.uid.
std::string UidOf(const std::string& pod_json) {
  const size_t at = pod_json.find("\"uid\":\"");
  REQUIRE(at != std::string::npos);
  const size_t start = at + 7;
  return pod_json.substr(start, pod_json.find('"', start) - start);
}

// kube-scheduler's cycle for one pod with the extender configured with bindVerb: filter,
// prioritize the feasible nodes, take the best (ties broken at random, as kube-scheduler's
// selectHost does; seeded here), bind through the extender, which makes the API call and
// counts the pod on the node at once. "" when no node fits; `trace` gets
// "node(scores...)".
std::string Schedule(const ExtenderClient& extender, const std::string& pod_key,
                     const std::string& pod_json, const std::vector<std::string>& nodes,
                     std::mt19937& random, std::string& trace) {
  const extender::ExtenderFilterResult filtered = extender.Filter(ArgsWithNames(pod_json, nodes));
  REQUIRE(filtered.error.empty());
  REQUIRE(filtered.node_names.has_value());
  if (filtered.node_names->empty()) return "";
  const std::map<std::string, int64_t> scores =
      extender.Prioritize(ArgsWithNames(pod_json, *filtered.node_names));
  std::string best;
  int ties = 0;
  for (const std::string& n : *filtered.node_names) {
    if (best.empty() || scores.at(n) > scores.at(best)) {
      best = n;
      ties = 1;
    } else if (scores.at(n) == scores.at(best) && random() % ++ties == 0) {
      best = n;  // reservoir sampling over the equal best
    }
  }
  std::string shown;
  for (const auto& [n, score] : scores) {
    shown += fmt::format("{}{}={}", shown.empty() ? "" : ",", n.substr(5), score);
  }
  trace += fmt::format("{}({}) ", best.substr(5), shown);
  const std::string ns = pod_key.substr(0, pod_key.find('/'));
  const std::string name = pod_key.substr(pod_key.find('/') + 1);
  const kube::HttpResponse bound = extender.Call(
      "POST", "/bind",
      fmt::format(R"({{"PodName":"{}","PodNamespace":"{}","PodUID":"{}","Node":"{}"}})", name, ns,
                  UidOf(pod_json), best));
  REQUIRE(bound.status == 200);
  StatusOr<extender::ExtenderBindingResult> result =
      extender::DecodeExtenderBindingResult(bound.body);
  REQUIRE(result.ok());
  REQUIRE(result->error.empty());
  return best;
}

TEST_CASE("the extender filters the hot node ranks by load and spreads a burst of pods",
          "[extender][e2e]") {
  // 16 cores each; Koordinator's default cpu threshold is 65% (10.4 cores).
  FakeCluster cluster({{.name = "node-hot", .load_cores = 12, .used_memory_gib = 30},
                       {.name = "node-cold", .load_cores = 2, .used_memory_gib = 8},
                       {.name = "node-warm", .load_cores = 5, .used_memory_gib = 16}});
  cluster.StartAdvisors(QRM_ADVISOR);
  INFO(ReadFile(cluster.LogOf("node-hot")));
  REQUIRE(cluster.WaitForNodeMetrics(60));

  const int port = FreeLoopbackPort();
  REQUIRE(port != 0);
  ChildProcess extender_process(
      {QRM_EXTENDER, "--address", fmt::format("127.0.0.1:{}", port), "--kubeconfig",
       cluster.kubeconfig(), "--min-watch-timeout", "30s"},
      cluster.dir().File("extender.log"));
  const ExtenderClient extender(port);
  REQUIRE(WaitFor([&] { return extender.Ready(); }, 20s));
  const std::vector<std::string> nodes = {"node-hot", "node-cold", "node-warm"};

  // One pod, node names (nodeCacheCapable): the hot node is refused for its CPU usage.
  cluster.pods().Seed("default/probe", PendingPodJson("default", "probe", 500, 1024));
  const std::string probe = *cluster.pods().Get("default/probe");
  const extender::ExtenderFilterResult by_name = extender.Filter(ArgsWithNames(probe, nodes));
  INFO(ReadFile(cluster.dir().File("extender.log")));
  REQUIRE(by_name.node_names.has_value());
  CHECK(*by_name.node_names == std::vector<std::string>{"node-cold", "node-warm"});
  REQUIRE(by_name.failed_nodes.has_value());
  REQUIRE(by_name.failed_nodes->contains("node-hot"));
  CHECK_THAT(by_name.failed_nodes->at("node-hot"), Contains("cpu"));

  // The same with whole Node objects: the answer gives the objects back.
  std::vector<std::string> node_objects;
  for (const std::string& n : nodes) node_objects.push_back(*cluster.nodes().Get(n));
  const extender::ExtenderFilterResult by_object =
      extender.Filter(ArgsWithNodes(probe, node_objects));
  REQUIRE(by_object.nodes.has_value());
  std::vector<std::string> kept;
  for (const extender::Node& n : by_object.nodes->items) kept.push_back(n.metadata.name);
  CHECK(kept == std::vector<std::string>{"node-cold", "node-warm"});

  // Ranked by load: the cold node first.
  const std::map<std::string, int64_t> scores =
      extender.Prioritize(ArgsWithNames(probe, {"node-cold", "node-warm"}));
  CHECK(scores.at("node-cold") > scores.at("node-warm"));

  // A recorded request written from the upstream types decodes (its nodes are unknown here).
  const std::string recorded =
      ReadFile(std::string(QRM_EXTENDER_GOLDEN) + "/extender_args_nodenames.json");
  const extender::ExtenderFilterResult answer = extender.Filter(recorded);
  CHECK(answer.error.empty());
  REQUIRE(answer.failed_nodes.has_value());
  CHECK_FALSE(answer.failed_nodes->empty());

  // A burst of 20 pods, scheduled one after the other within one report interval and bound
  // through the extender's bind verb: the estimation of the pods placed since the last
  // NodeMetric spreads them.
  for (int i = 0; i < 20; ++i) {
    const std::string name = fmt::format("burst-{:02}", i);
    cluster.pods().Seed("default/" + name, PendingPodJson("default", name, 500, 1024));
  }
  const uint64_t pod_events_before = PodEvents(extender);
  std::map<std::string, int> placed;
  std::string sequence;
  std::mt19937 random(20261127);
  for (int i = 0; i < 20; ++i) {
    const std::string key = fmt::format("default/burst-{:02}", i);
    const std::string node =
        Schedule(extender, key, *cluster.pods().Get(key), nodes, random, sequence);
    ++placed[node.empty() ? "(none)" : node];
  }
  WARN("burst placement: node-cold " << placed["node-cold"] << ", node-warm " << placed["node-warm"]
                                     << ", node-hot " << placed["node-hot"] << ", unplaced "
                                     << placed["(none)"] << "; in order: " << sequence);
  CHECK(placed["node-hot"] == 0);
  CHECK(placed["node-cold"] < 20);
  CHECK(placed["node-warm"] > 0);
  CHECK(placed["(none)"] == 0);
  // The bindings reached the API server, and the pod watch brings them back (the path of a
  // configuration without bindVerb): 20 events beyond the ones seen before the burst.
  for (int i = 0; i < 20; ++i) {
    const std::string key = fmt::format("default/burst-{:02}", i);
    CHECK_THAT(*cluster.pods().Get(key), Contains("\"nodeName\":\"node-"));
  }
  CHECK(WaitFor([&] { return PodEvents(extender) >= pod_events_before + 20; }, 10s));
  CHECK(extender_process.Kill(SIGTERM) == 0);
}

}  // namespace
}  // namespace qrm::testing
