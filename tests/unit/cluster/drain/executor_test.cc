#include "cluster/drain/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "cluster/drain/pods_gone.h"
#include "cluster/kube/kube_client.h"
#include "testing/kube/object_collection.h"
#include "testing/kube/test_api_server.h"
#include "tests/unit/cluster/kube/test_client.h"

namespace qrm::cluster::drain {
namespace {

using Catch::Matchers::Contains;
using kube::EvictionOutcome;
using qrm::testing::EvictionAnswer;
using qrm::testing::ObjectCollection;
using qrm::testing::RecordedEviction;
using qrm::testing::TestApiServer;
using namespace std::chrono_literals;

constexpr char kGpuTaint[] = R"({"key":"dedicated","value":"gpu","effect":"NoSchedule"})";
constexpr char kDrainTaint[] =
    R"({"key":"qrm.io/drain","value":"drain-planner","effect":"NoSchedule"})";

std::string Node(const std::string& name, const std::string& spec = "{}") {
  return fmt::format(R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}"}},)"
                     R"("spec":{},"status":{{"allocatable":{{"cpu":"4"}}}}}})",
                     name, spec);
}

// An API server with nodes that take merge patches, and a client for it.
struct Cluster {
  Cluster() { REQUIRE(server.Start().ok()); }

  kube::KubeClient Client() const { return kube::TestClientFor(server); }
  std::string NodeJson(const std::string& name) const { return nodes.Get(name).value_or(""); }
  // The eviction requests for `pod` (its name), in the order the server got them.
  std::vector<RecordedEviction> EvictionsOf(const std::string& pod) const {
    std::vector<RecordedEviction> out;
    for (const RecordedEviction& e : server.evictions()) {
      if (e.name == pod) out.push_back(e);
    }
    return out;
  }

  TestApiServer server;
  ObjectCollection nodes{
      server, {.path = "/api/v1/nodes", .kind = "Node", .api_version = "v1", .merge_patch = true}};
};

DrainTarget Target(const std::string& node, const std::vector<std::string>& pods) {
  DrainTarget t{.node = node};
  for (const std::string& pod : pods) t.pods.emplace_back("default", pod);
  return t;
}

ExecuteOptions Fast() {
  return {.retry_interval = 20ms, .eviction_timeout = 10s};
}

// Where the first eviction request satisfying `match` is in the server's record; -1 if none.
template <typename Match>
long IndexOf(const TestApiServer& server, Match match) {
  const std::vector<RecordedEviction> seen = server.evictions();
  const auto it = std::find_if(seen.begin(), seen.end(), match);
  return it == seen.end() ? -1 : it - seen.begin();
}

TEST_CASE("the cordon patch keeps the taints and adds the drain taint and unschedulable") {
  const std::string node = R"({"metadata":{"name":"n1","resourceVersion":"12"},)"
                           R"("spec":{"taints":[)" +
                           std::string(kGpuTaint) + "]}}";
  const StatusOr<std::optional<std::string>> patch = CordonPatch(node, "qrm.io/drain");
  REQUIRE(patch.ok());
  REQUIRE(patch->has_value());
  CHECK(**patch == R"({"metadata":{"resourceVersion":"12"},"spec":{"unschedulable":true,)"
                   R"("taints":[)" +
                       std::string(kGpuTaint) + "," + kDrainTaint + "]}}");
}

TEST_CASE("the cordon patch of a node without a spec holds the drain taint alone") {
  const StatusOr<std::optional<std::string>> patch =
      CordonPatch(R"({"metadata":{"name":"n1","resourceVersion":"3"}})", "qrm.io/drain");
  REQUIRE(patch.ok());
  REQUIRE(patch->has_value());
  CHECK(**patch == R"({"metadata":{"resourceVersion":"3"},"spec":{"unschedulable":true,)"
                   R"("taints":[)" +
                       std::string(kDrainTaint) + "]}}");
}

TEST_CASE("a node cordoned and tainted already needs no patch") {
  const std::string node = R"({"metadata":{"resourceVersion":"3"},"spec":{"unschedulable":true,)"
                           R"("taints":[)" +
                           std::string(kDrainTaint) + "]}}";
  const StatusOr<std::optional<std::string>> patch = CordonPatch(node, "qrm.io/drain");
  REQUIRE(patch.ok());
  CHECK_FALSE(patch->has_value());
}

TEST_CASE("the drain taint with another effect or half a cordon still needs the patch") {
  const std::string no_execute =
      R"({"metadata":{"resourceVersion":"3"},"spec":{"unschedulable":true,"taints":[)"
      R"({"key":"qrm.io/drain","effect":"NoExecute"}]}})";
  StatusOr<std::optional<std::string>> patch = CordonPatch(no_execute, "qrm.io/drain");
  REQUIRE(patch.ok());
  REQUIRE(patch->has_value());
  CHECK_THAT(**patch, Contains(R"({"key":"qrm.io/drain","effect":"NoExecute"},)" +
                               std::string(kDrainTaint)));

  const std::string tainted_only = R"({"metadata":{"resourceVersion":"3"},"spec":{"taints":[)" +
                                   std::string(kDrainTaint) + "]}}";
  patch = CordonPatch(tainted_only, "qrm.io/drain");
  REQUIRE(patch.ok());
  REQUIRE(patch->has_value());
  CHECK(**patch == R"({"metadata":{"resourceVersion":"3"},"spec":{"unschedulable":true,)"
                   R"("taints":[)" +
                       std::string(kDrainTaint) + "]}}");
}

TEST_CASE("a node without resourceVersion or with bad taints gives no cordon patch") {
  CHECK_FALSE(CordonPatch(R"({"metadata":{"name":"n1"}})", "k").ok());
  CHECK_FALSE(
      CordonPatch(R"({"metadata":{"resourceVersion":"1"},"spec":{"taints":{}}})", "k").ok());
  CHECK_FALSE(CordonPatch("[]", "k").ok());
}

TEST_CASE("the test server's merge patch refuses a stale resourceVersion") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  const StatusOr<kube::KubeResponse> answer = cluster.Client().Request(
      "PATCH", "/api/v1/nodes/n1",
      R"({"metadata":{"resourceVersion":"1"},"spec":{"unschedulable":true}})",
      "application/merge-patch+json");
  REQUIRE(answer.ok());
  CHECK(answer->code == 409);
  CHECK(cluster.nodes.conflicts() == 1);
  CHECK(cluster.nodes.writes() == 0);
}

TEST_CASE("a drain cordons the node keeping its taints then evicts its pods") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1", fmt::format(R"({{"taints":[{}]}})", kGpuTaint)));
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("n1", {"web-1", "web-2"})}, Fast(), {});
  REQUIRE(report.nodes.size() == 1);
  const NodeExecution& n = report.nodes[0];
  CHECK(n.node == "n1");
  CHECK(n.cordoned);
  CHECK(n.complete);
  CHECK(n.error.empty());
  CHECK(report.complete());
  REQUIRE(n.pods.size() == 2);
  for (const PodEvictionReport& p : n.pods) {
    CHECK(p.outcome == EvictionOutcome::kEvicted);
    CHECK(p.attempts == 1);
  }
  CHECK(n.pods[0].pod == "default/web-1");

  const std::string node = cluster.NodeJson("n1");
  CHECK_THAT(node, Contains(R"("unschedulable":true)"));
  CHECK_THAT(node, Contains(fmt::format(R"("taints":[{},{}])", kGpuTaint, kDrainTaint)));
  CHECK_THAT(node, Contains(R"("allocatable":{"cpu":"4"})"));  // the status is untouched
  CHECK(cluster.nodes.writes() == 1);

  const std::vector<RecordedEviction> seen = cluster.server.evictions();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].name == "web-1");
  CHECK(seen[1].name == "web-2");
  CHECK_FALSE(seen[0].dry_run);
}

TEST_CASE("cordoning a node cordoned already writes nothing") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  REQUIRE(CordonNode(cluster.Client(), "n1", "qrm.io/drain").ok());
  REQUIRE(CordonNode(cluster.Client(), "n1", "qrm.io/drain").ok());
  CHECK(cluster.nodes.writes() == 1);
  const std::string node = cluster.NodeJson("n1");
  CHECK_THAT(node, Contains(fmt::format(R"("taints":[{}])", kDrainTaint)));
}

TEST_CASE("a cordon answered 409 reads the node again and patches again") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  cluster.nodes.FailWrites(409, 2);
  REQUIRE(CordonNode(cluster.Client(), "n1", "qrm.io/drain").ok());
  CHECK(cluster.nodes.conflicts() == 2);
  CHECK(cluster.nodes.writes() == 1);
  CHECK_THAT(cluster.NodeJson("n1"), Contains(R"("unschedulable":true)"));
}

TEST_CASE("a cordon that keeps conflicting is given up") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  cluster.nodes.FailWrites(409, 100);
  const Status s = CordonNode(cluster.Client(), "n1", "qrm.io/drain");
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kAborted);
  CHECK_THAT(s.message(), Contains("PATCH"));
  CHECK(cluster.nodes.conflicts() == 5);
}

TEST_CASE("a node whose cordon fails is not evicted from") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  cluster.nodes.FailWrites(500, 1);
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("gone", {"a"}), Target("n1", {"b"})}, Fast(), {});
  REQUIRE(report.nodes.size() == 2);
  for (const NodeExecution& n : report.nodes) {
    CHECK_FALSE(n.cordoned);
    CHECK_FALSE(n.complete);
    CHECK(n.pods.empty());
    CHECK_THAT(n.error, Contains("cordon failed"));
  }
  CHECK_THAT(report.nodes[0].error, Contains("404"));
  CHECK_THAT(report.nodes[1].error, Contains("500"));
  CHECK(cluster.server.evictions().empty());
  CHECK_FALSE(report.complete());
}

TEST_CASE("an eviction blocked by a budget is tried again until the budget allows it") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  cluster.server.SetEvictionAnswer("default", "web-1", EvictionAnswer::kBudget);
  std::jthread release([&] {
    std::this_thread::sleep_for(150ms);
    cluster.server.SetEvictionAnswer("default", "web-1", EvictionAnswer::kEvict);
  });
  ExecuteOptions options = Fast();
  options.retry_interval = 50ms;
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("n1", {"web-1", "web-2"})}, options, {});
  REQUIRE(report.nodes.size() == 1);
  const NodeExecution& n = report.nodes[0];
  CHECK(n.complete);
  REQUIRE(n.pods.size() == 2);
  CHECK(n.pods[0].outcome == EvictionOutcome::kEvicted);
  CHECK(n.pods[0].attempts >= 2);
  CHECK(n.pods[1].attempts == 1);  // the other pod is not held up by the blocked one
  const std::vector<RecordedEviction> tries = cluster.EvictionsOf("web-1");
  REQUIRE(tries.size() >= 2);
  CHECK(tries.front().code == 429);
  CHECK(tries.back().code == 201);
}

TEST_CASE("an eviction blocked for good leaves the node incomplete after the timeout") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  cluster.server.SetEvictionAnswer("default", "web-1", EvictionAnswer::kBudget);
  ExecuteOptions options{.retry_interval = 50ms, .eviction_timeout = 300ms};
  const auto start = std::chrono::steady_clock::now();
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("n1", {"web-1", "web-2"})}, options, {});
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= 300ms);
  CHECK(took < 3s);
  REQUIRE(report.nodes.size() == 1);
  const NodeExecution& n = report.nodes[0];
  CHECK_FALSE(n.complete);
  CHECK(n.cordoned);  // stays cordoned: web-2 must not come back
  REQUIRE(n.pods.size() == 2);
  CHECK(n.pods[0].outcome == EvictionOutcome::kBlockedByBudget);
  CHECK(n.pods[0].attempts >= 4);
  CHECK_THAT(n.pods[0].message, Contains("disruption budget"));
  CHECK(n.pods[1].outcome == EvictionOutcome::kEvicted);
  CHECK_THAT(n.error, Contains("1 of 2 pods not evicted within 300 ms"));
  CHECK_THAT(n.error, Contains("default/web-1"));
  CHECK(cluster.EvictionsOf("web-2").size() == 1);
}

TEST_CASE("a pod gone already counts as drained") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  cluster.server.SetEvictionAnswer("default", "old", EvictionAnswer::kNotFound);
  const ExecuteReport report = ExecuteDrains(cluster.Client(), {Target("n1", {"old"})}, Fast(), {});
  REQUIRE(report.nodes.size() == 1);
  CHECK(report.nodes[0].complete);
  REQUIRE(report.nodes[0].pods.size() == 1);
  CHECK(report.nodes[0].pods[0].outcome == EvictionOutcome::kGone);
}

TEST_CASE("a server error is tried again and a bad pod name never sent") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  cluster.server.SetEvictionAnswer("default", "flaky", EvictionAnswer::kServerError);
  std::jthread recover([&] {
    std::this_thread::sleep_for(100ms);
    cluster.server.SetEvictionAnswer("default", "flaky", EvictionAnswer::kEvict);
  });
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("n1", {"flaky", "Bad_Name"})}, Fast(), {});
  REQUIRE(report.nodes.size() == 1);
  const NodeExecution& n = report.nodes[0];
  REQUIRE(n.pods.size() == 2);
  CHECK(n.pods[0].outcome == EvictionOutcome::kEvicted);
  CHECK(n.pods[0].attempts >= 2);
  CHECK(n.pods[1].outcome == EvictionOutcome::kError);
  CHECK(n.pods[1].attempts == 0);
  CHECK_FALSE(n.complete);
  CHECK_THAT(n.error, Contains("default/Bad_Name"));
  CHECK(cluster.EvictionsOf("Bad_Name").empty());
}

TEST_CASE("no more than parallelism nodes are drained at once") {
  Cluster cluster;
  for (const char* name : {"a", "b", "c"}) cluster.nodes.Seed(name, Node(name));
  cluster.server.SetEvictionAnswer("default", "a-pod", EvictionAnswer::kBudget);
  cluster.server.SetEvictionAnswer("default", "b-pod", EvictionAnswer::kBudget);
  ExecuteOptions options = Fast();
  options.parallelism = 2;
  auto run = std::async(std::launch::async, [&] {
    return ExecuteDrains(cluster.Client(),
                         {Target("a", {"a-pod"}), Target("b", {"b-pod"}), Target("c", {"c-pod"})},
                         options, {});
  });
  std::this_thread::sleep_for(300ms);
  // a and b are worked on together; c waits for one of them.
  CHECK(cluster.EvictionsOf("a-pod").size() >= 2);
  CHECK(cluster.EvictionsOf("b-pod").size() >= 2);
  CHECK(cluster.EvictionsOf("c-pod").empty());
  CHECK_THAT(cluster.NodeJson("c"), !Contains("unschedulable"));
  cluster.server.SetEvictionAnswer("default", "a-pod", EvictionAnswer::kEvict);
  std::this_thread::sleep_for(100ms);
  cluster.server.SetEvictionAnswer("default", "b-pod", EvictionAnswer::kEvict);
  const ExecuteReport report = run.get();
  CHECK(report.complete());
  const long a_done =
      IndexOf(cluster.server, [](const auto& e) { return e.name == "a-pod" && e.code == 201; });
  const long c_first = IndexOf(cluster.server, [](const auto& e) { return e.name == "c-pod"; });
  REQUIRE(a_done >= 0);
  CHECK(c_first > a_done);
  REQUIRE(report.nodes.size() == 3);
  CHECK(report.nodes[2].node == "c");  // the report keeps the targets' order
}

TEST_CASE("with parallelism one the nodes are drained one after another") {
  Cluster cluster;
  for (const char* name : {"a", "b"}) cluster.nodes.Seed(name, Node(name));
  cluster.server.SetEvictionAnswer("default", "a-pod", EvictionAnswer::kBudget);
  std::jthread release([&] {
    std::this_thread::sleep_for(150ms);
    cluster.server.SetEvictionAnswer("default", "a-pod", EvictionAnswer::kEvict);
  });
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("a", {"a-pod"}), Target("b", {"b-pod"})}, Fast(), {});
  CHECK(report.complete());
  const long a_done =
      IndexOf(cluster.server, [](const auto& e) { return e.name == "a-pod" && e.code == 201; });
  const long b_first = IndexOf(cluster.server, [](const auto& e) { return e.name == "b-pod"; });
  REQUIRE(a_done >= 0);
  CHECK(b_first == a_done + 1);
}

TEST_CASE("a dry run writes nothing and evicts with dryRun") {
  Cluster cluster;
  cluster.nodes.Seed("n1", Node("n1"));
  const std::string before = cluster.NodeJson("n1");
  ExecuteOptions options = Fast();
  options.dry_run = true;
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("n1", {"web-1", "web-2"})}, options, {});
  REQUIRE(report.nodes.size() == 1);
  CHECK(report.nodes[0].complete);
  CHECK_FALSE(report.nodes[0].cordoned);
  CHECK(cluster.nodes.writes() == 0);
  CHECK(cluster.NodeJson("n1") == before);
  const std::vector<RecordedEviction> seen = cluster.server.evictions();
  REQUIRE(seen.size() == 2);
  for (const RecordedEviction& e : seen) CHECK(e.dry_run);
}

TEST_CASE("a dry run of a missing node is an error") {
  Cluster cluster;
  ExecuteOptions options = Fast();
  options.dry_run = true;
  const ExecuteReport report = ExecuteDrains(cluster.Client(), {Target("n9", {"p"})}, options, {});
  REQUIRE(report.nodes.size() == 1);
  CHECK_FALSE(report.nodes[0].complete);
  CHECK_THAT(report.nodes[0].error, Contains("404"));
  CHECK(cluster.server.evictions().empty());
}

TEST_CASE("a stop ends the wait for a budget at once and starts no other node") {
  Cluster cluster;
  for (const char* name : {"a", "b"}) cluster.nodes.Seed(name, Node(name));
  cluster.server.SetEvictionAnswer("default", "a-pod", EvictionAnswer::kBudget);
  std::stop_source stop;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop.request_stop();
  });
  const ExecuteOptions options{.retry_interval = 10s, .eviction_timeout = 10min};
  const auto start = std::chrono::steady_clock::now();
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("a", {"a-pod"}), Target("b", {"b-pod"})}, options,
                    stop.get_token());
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  REQUIRE(report.nodes.size() == 2);
  CHECK_FALSE(report.nodes[0].complete);
  CHECK_THAT(report.nodes[0].error, Contains("stopped"));
  CHECK(report.nodes[0].pods.at(0).outcome == EvictionOutcome::kBlockedByBudget);
  CHECK_FALSE(report.nodes[1].complete);
  CHECK_FALSE(report.nodes[1].cordoned);
  CHECK_THAT(report.nodes[1].error, Contains("stopped before the node was started"));
  CHECK(cluster.EvictionsOf("b-pod").empty());
}

// GET /api/v1/namespaces/{ns}/pods/{name}, as scripted per pod: how many GETs it is still
// bound to its node (and terminating), then 404; or bound elsewhere from the start.
class PodReads {
 public:
  explicit PodReads(TestApiServer& server) {
    server.AddRoute(
        "GET", "/api/v1/namespaces/{}/pods/{}", [this](const qrm::testing::ApiRequest& r) {
          std::lock_guard lock(mu_);
          const std::string& name = r.params.at(1);
          const int seen = reads_[name]++;
          const auto script = scripts_.find(name);
          if (script == scripts_.end() || seen >= script->second.first) {
            return qrm::testing::StatusAnswer(404, "NotFound", "pods \"" + name + "\" not found");
          }
          return qrm::testing::ApiResponse{
              .body = fmt::format(R"({{"kind":"Pod","apiVersion":"v1","metadata":{{"name":"{}",)"
                                  R"("deletionTimestamp":"2026-11-27T00:00:00Z"}},)"
                                  R"("spec":{{"nodeName":"{}"}}}})",
                                  name, script->second.second)};
        });
  }
  // `name` answers bound to `node` for its first `reads` GETs (-1: always).
  void Script(const std::string& name, int reads, const std::string& node) {
    std::lock_guard lock(mu_);
    scripts_[name] = {reads < 0 ? 1 << 30 : reads, node};
  }
  int reads(const std::string& name) const {
    std::lock_guard lock(mu_);
    const auto it = reads_.find(name);
    return it == reads_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::pair<int, std::string>> scripts_;
  std::map<std::string, int> reads_;
};

TEST_CASE("a drain waits until the evicted pods have left the node") {
  Cluster cluster;
  PodReads pods(cluster.server);
  cluster.nodes.Seed("n1", Node("n1"));
  pods.Script("web-1", 3, "n1");  // terminating on n1 for three reads, then gone
  pods.Script("db-0", -1, "n7");  // a StatefulSet's replacement, already bound elsewhere
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("n1", {"web-1", "db-0", "web-2"})}, Fast(), {});
  REQUIRE(report.nodes.size() == 1);
  const NodeExecution& n = report.nodes[0];
  CHECK(n.complete);
  CHECK(n.error.empty());
  for (const PodEvictionReport& p : n.pods) CHECK(p.left_node);
  CHECK(pods.reads("web-1") == 4);
  CHECK(pods.reads("db-0") == 1);
  CHECK(pods.reads("web-2") == 1);
}

TEST_CASE("a pod that stays on its node leaves the drain incomplete and the node cordoned") {
  Cluster cluster;
  PodReads pods(cluster.server);
  cluster.nodes.Seed("n1", Node("n1"));
  pods.Script("stuck", -1, "n1");
  ExecuteOptions options = Fast();
  options.termination_timeout = 200ms;
  const ExecuteReport report =
      ExecuteDrains(cluster.Client(), {Target("n1", {"web-1", "stuck"})}, options, {});
  REQUIRE(report.nodes.size() == 1);
  const NodeExecution& n = report.nodes[0];
  CHECK_FALSE(n.complete);
  CHECK(n.cordoned);
  CHECK_THAT(n.error, Contains("1 of 2 evicted pods not gone from the node within 200 ms"));
  CHECK_THAT(n.error, Contains("default/stuck (still on the node)"));
  CHECK(n.pods.at(0).left_node);
  CHECK_FALSE(n.pods.at(1).left_node);
  CHECK(n.pods.at(1).outcome == EvictionOutcome::kEvicted);
  CHECK(pods.reads("stuck") >= 2);  // polled, not read once
  CHECK_THAT(cluster.NodeJson("n1"), Contains(R"("unschedulable":true)"));
}

TEST_CASE("no wait when it is off or in a dry run and none for a pod gone at eviction") {
  for (const bool dry_run : {false, true}) {
    INFO((dry_run ? "dry run" : "wait off"));
    Cluster cluster;
    PodReads pods(cluster.server);
    cluster.nodes.Seed("n1", Node("n1"));
    pods.Script("web-1", -1, "n1");
    cluster.server.SetEvictionAnswer("default", "gone", EvictionAnswer::kNotFound);
    ExecuteOptions options = Fast();
    options.dry_run = dry_run;
    if (!dry_run) options.termination_timeout = 0ms;
    const ExecuteReport report =
        ExecuteDrains(cluster.Client(), {Target("n1", {"web-1", "gone"})}, options, {});
    CHECK(report.nodes.at(0).complete);
    CHECK(pods.reads("web-1") == 0);
    CHECK(pods.reads("gone") == 0);
    CHECK_FALSE(report.nodes.at(0).pods.at(0).left_node);  // not known
    CHECK(report.nodes.at(0).pods.at(1).left_node);        // 404 at eviction
  }
}

TEST_CASE("PodLeftNode reads 404, the node the pod is bound to and refuses bad answers") {
  const auto left = [](int code, const std::string& body) {
    return PodLeftNode({.code = code, .body = body}, "n1", "https://api/pods/p");
  };
  CHECK(*left(404, ""));
  CHECK_FALSE(*left(200, R"({"spec":{"nodeName":"n1"}})"));
  CHECK(*left(200, R"({"spec":{"nodeName":"n2"}})"));
  CHECK(*left(200, R"({"spec":{}})"));  // a replacement not bound yet
  CHECK(*left(200, R"({"metadata":{}})"));
  const StatusOr<bool> server = left(500, R"({"kind":"Status","message":"etcd down"})");
  REQUIRE_FALSE(server.ok());
  CHECK_THAT(server.status().message(), Contains("GET https://api/pods/p"));
  const StatusOr<bool> garbage = left(200, "<html>");
  REQUIRE_FALSE(garbage.ok());
  CHECK_THAT(garbage.status().message(), Contains("not a JSON object"));
  const StatusOr<bool> typed = left(200, R"({"spec":{"nodeName":7}})");
  REQUIRE_FALSE(typed.ok());
  CHECK_THAT(typed.status().message(), Contains("spec.nodeName"));
}

}  // namespace
}  // namespace qrm::cluster::drain
