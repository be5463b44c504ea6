// qrm-drain-planner as an operator runs it: plan and compare from `kubectl get -o json` dumps,
// JSON output, the state file carried between passes, and input it refuses (exit 2, naming
// the object and field, nothing planned).
#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "testing/kube/object_collection.h"
#include "testing/kube/test_api_server.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace qrm {
namespace {

using Catch::Matchers::Contains;
using testing::RunProcess;

const std::string kCluster = std::string(QRM_DRAIN_FIXTURES) + "/strand-cluster.json";
const std::string kNrt = std::string(QRM_DRAIN_FIXTURES) + "/strand-nrt.json";

std::vector<std::string> Plan(std::vector<std::string> extra) {
  std::vector<std::string> argv = {QRM_DRAIN_PLANNER,
                                   "plan",
                                   "--input",
                                   kCluster,
                                   "--input",
                                   kNrt,
                                   "--now",
                                   "2026-11-27T00:00:00Z",
                                   "--max-drain-parallelism",
                                   "5"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

rapidjson::Document Json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  INFO(text);
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

TEST_CASE("compare shows the pod the NUMA-blind plan strands", "[drain][cli]") {
  const auto run = RunProcess(Plan({"--compare"}));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.output,
             Contains("NUMA-blind (CA)                 2            2            4         1"));
  CHECK_THAT(run.output,
             Contains("qrm (NUMA-aware)                2            2            4         0"));
  CHECK_THAT(run.output,
             Contains("default/db-1 would be refused on dst-split (TopologyAffinityError)"
                      "; it goes to dst-whole NUMA 0 in qrm's plan"));

  const auto json = RunProcess(Plan({"--compare", "--output", "json"}));
  REQUIRE(json.exit_code == 0);
  rapidjson::Document doc = Json(json.output);
  CHECK(doc["numaBlind"]["stranded"].Size() == 1);
  CHECK(doc["numaAware"]["stranded"].Size() == 0);
  CHECK(doc["numaAware"]["summary"]["drain"].GetUint64() == 2);
}

TEST_CASE("the state file carries destination hints to the next pass", "[drain][cli]") {
  testing::TempDir dir;
  const std::string state = dir.File("state.json");
  const auto first = RunProcess(Plan({"--state", state, "--output", "json"}));
  REQUIRE(first.exit_code == 0);
  CHECK_THAT(Json(first.output)["drain"][0]["moves"][0]["fromHint"].GetBool() ? "hint" : "scan",
             Catch::Matchers::Equals("scan"));
  std::ifstream in(state);
  const std::string saved{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  CHECK_THAT(saved, Contains(R"("src-1":{"uid-db-1":"dst-whole")"));
  const auto second = RunProcess(Plan({"--state", state, "--output", "json"}));
  REQUIRE(second.exit_code == 0);
  CHECK(Json(second.output)["drain"][0]["moves"][0]["fromHint"].GetBool());

  std::ofstream(state) << R"({"destinationHints": {}, "deletedNode": []})";
  const auto typo = RunProcess(Plan({"--state", state}));
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.output, Contains("deletedNode: unknown field"));

  // A node being drained that is gone has finished: it leaves the state.
  std::ofstream(state) << R"({"deletedNodes": ["gone"]})";
  REQUIRE(RunProcess(Plan({"--state", state})).exit_code == 0);
  std::ifstream again(state);
  const std::string pruned{std::istreambuf_iterator<char>(again), std::istreambuf_iterator<char>()};
  CHECK_THAT(pruned, Contains(R"("deletedNodes":[])"));
}

// Three nodes: "src" with two pods on EBS volumes, "full" whose CSINode allows 1 EBS volume and
// holds one, "roomy" without a limit. Both destinations are equally busy.
constexpr const char* kVolumeCluster = R"({"kind": "List", "apiVersion": "v1", "items": [
  {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "src"},
   "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}},
  {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "full"},
   "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}},
  {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "roomy"},
   "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}},
  {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "db-0", "namespace": "default",
     "ownerReferences": [{"kind": "StatefulSet", "name": "db", "controller": true}]},
   "spec": {"nodeName": "src", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]},
   "status": {"phase": "Running"}},
  {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "busy-full", "namespace": "default",
     "ownerReferences": [{"kind": "StatefulSet", "name": "busy", "controller": true}]},
   "spec": {"nodeName": "full", "containers": [{"name": "c", "resources": {"requests": {"cpu": "6"}}}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-busy"}}]},
   "status": {"phase": "Running"}},
  {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "busy-roomy", "namespace": "default",
     "ownerReferences": [{"kind": "ReplicaSet", "name": "busy", "controller": true}]},
   "spec": {"nodeName": "roomy", "containers": [{"name": "c", "resources": {"requests": {"cpu": "6"}}}]},
   "status": {"phase": "Running"}},
  {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
   "metadata": {"name": "data-db-0", "namespace": "default"}, "spec": {"volumeName": "pv-db"}},
  {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
   "metadata": {"name": "data-busy", "namespace": "default"}, "spec": {"volumeName": "pv-busy"}},
  {"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "pv-db"},
   "spec": {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-db"}}},
  {"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "pv-busy"},
   "spec": {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-busy"}}},
  {"kind": "CSINode", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": "full"},
   "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-2", "allocatable": {"count": 1}}]}}
]})";

TEST_CASE("a pod on a CSI volume goes only where its driver can attach one more", "[drain][cli]") {
  testing::TempDir dir;
  const std::string input = dir.File("cluster.json");
  std::ofstream(input) << kVolumeCluster;
  const auto run = RunProcess({QRM_DRAIN_PLANNER, "plan", "--input", input, "--output", "json"});
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  rapidjson::Document doc = Json(run.output);
  REQUIRE(doc["drain"].Size() == 1);
  CHECK(std::string(doc["drain"][0]["node"].GetString()) == "src");
  CHECK(std::string(doc["drain"][0]["moves"][0]["destination"].GetString()) == "roomy");

  // Without "roomy" the pod has no home: "full" would need a second EBS slot.
  std::string without = kVolumeCluster;
  const std::string roomy_node = R"("metadata": {"name": "roomy"})";
  without.replace(without.find(roomy_node), roomy_node.size(),
                  R"("metadata": {"name": "roomy"}, "spec": {"unschedulable": true})");
  std::ofstream(input) << without;
  const auto refused = RunProcess({QRM_DRAIN_PLANNER, "plan", "--input", input});
  INFO(refused.output);
  REQUIRE(refused.exit_code == 0);
  CHECK_THAT(refused.output, Contains("volume attach limit"));
}

TEST_CASE("bad input is refused naming the object and field", "[drain][cli]") {
  testing::TempDir dir;
  const std::string pods = dir.File("pods.json");
  std::ofstream(pods) << R"({"kind": "PodList", "apiVersion": "v1", "items": [
    {"metadata": {"name": "web-1", "namespace": "default"},
     "spec": {"nodeName": "nowhere", "containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]}}]})";
  const auto run = RunProcess({QRM_DRAIN_PLANNER, "plan", "--input", pods});
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.output, Contains("pod default/web-1"));
  CHECK_THAT(run.output, Contains("resources.requests.cpu"));
  CHECK(run.output.find("plan:") == std::string::npos);  // nothing planned

  const auto flag =
      RunProcess({QRM_DRAIN_PLANNER, "plan", "--input", kCluster, "--max-drain-parallelism", "-3"});
  CHECK(flag.exit_code == 2);
  CHECK_THAT(flag.output, Contains("max-drain-parallelism: -3"));
  const auto group = RunProcess(Plan({"--node-group-min-size", "pool"}));
  CHECK(group.exit_code == 2);
  CHECK_THAT(group.output, Contains("node-group-min-size \"pool\""));
  const auto command = RunProcess({QRM_DRAIN_PLANNER, "drain"});
  CHECK(command.exit_code == 2);
  CHECK_THAT(command.output, Contains("unknown command \"drain\""));
  const auto execute = RunProcess({QRM_DRAIN_PLANNER, "execute", "--input", kCluster});
  CHECK(execute.exit_code == 2);
  CHECK_THAT(execute.output, Contains("input: execute reads the cluster from the API server"));
}

// The strand fixture's NRTs with qrm-advisor's zone attributes: nobody bound anywhere, except
// the zones of dst-whole named in `exclusive`, each held exclusively by one pod.
std::string NrtWithBindings(const std::vector<std::string>& exclusive) {
  std::ifstream in(kNrt);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  rapidjson::Document doc = Json(text);
  auto& a = doc.GetAllocator();
  for (auto& nrt : doc["items"].GetArray()) {
    const std::string node = nrt["metadata"]["name"].GetString();
    for (auto& zone : nrt["zones"].GetArray()) {
      const std::string name = zone["name"].GetString();
      const bool held = node == "dst-whole" &&
                        std::find(exclusive.begin(), exclusive.end(), name) != exclusive.end();
      rapidjson::Value attributes(rapidjson::kArrayType);
      for (const auto& [key, value] : std::vector<std::pair<const char*, const char*>>{
               {"qrm.io/numa-bound-pods", held ? "1" : "0"},
               {"qrm.io/numa-exclusive", held ? "true" : "false"},
               {"qrm.io/dedicated-cpu", "0"},
               {"qrm.io/numa-bound-roles", ""}}) {
        rapidjson::Value attribute(rapidjson::kObjectType);
        attribute.AddMember("name", rapidjson::StringRef(key), a);
        attribute.AddMember("value", rapidjson::StringRef(value), a);
        attributes.PushBack(attribute, a);
      }
      zone.AddMember("attributes", attributes, a);
    }
  }
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  doc.Accept(writer);
  return out.GetString();
}

TEST_CASE("zones held exclusively keep NUMA-bound pods off, as qrm's plugins do", "[drain][cli]") {
  testing::TempDir dir;
  const std::string nrt = dir.File("nrt.json");
  auto plan = [&](const std::vector<std::string>& exclusive) {
    std::ofstream(nrt) << NrtWithBindings(exclusive);
    std::vector<std::string> argv = Plan({});
    *std::find(argv.begin(), argv.end(), kNrt) = nrt;
    return RunProcess(argv);
  };
  // Zone 0 of dst-whole, where both db pods went, is held: they go to its zone 1.
  const auto one = plan({"node-0"});
  INFO(one.output);
  REQUIRE(one.exit_code == 0);
  CHECK_THAT(one.output, Contains("default/db-1                             -> dst-whole"
                                  "                NUMA 1"));
  CHECK_THAT(one.output, Contains("default/db-2                             -> dst-whole"
                                  "                NUMA 1"));
  // Both held: dst-whole takes no db pod (wherever else they may go).
  const auto both = plan({"node-0", "node-1"});
  INFO(both.output);
  REQUIRE(both.exit_code == 0);
  CHECK(both.output.find("-> dst-whole                NUMA 0") == std::string::npos);
  CHECK(both.output.find("-> dst-whole                NUMA 1") == std::string::npos);
}

TEST_CASE("the role table is the nodes' own, refused as they refuse it", "[drain][cli]") {
  const auto comma = RunProcess(Plan({"--roles", R"({"a,b": {"qos_level": "shared_cores"}})"}));
  CHECK(comma.exit_code == 2);
  CHECK_THAT(comma.output, Contains("invalid role name \"a,b\""));
  const auto twice = RunProcess(
      Plan({"--roles", R"({"a": {"qos_level": "shared_cores"}})", "--roles-file", "/x"}));
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.output, Contains("give the role table once"));
  const auto ok = RunProcess(Plan({"--roles", R"({"a": {"qos_level": "shared_cores"}})"}));
  CHECK(ok.exit_code == 0);
}

// The strand fixture served by an in-process API server with the real list paths.
struct LiveCluster {
  explicit LiveCluster(testing::TempDir& dir) {
    REQUIRE(server.Start().ok());
    std::ifstream in(kCluster);
    rapidjson::Document doc;
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    doc.Parse(text.c_str());
    for (const auto& item : doc["items"].GetArray()) Seed(item);
    std::ifstream nrt_in(kNrt);
    const std::string nrt_text{std::istreambuf_iterator<char>(nrt_in),
                               std::istreambuf_iterator<char>()};
    rapidjson::Document nrt;
    nrt.Parse(nrt_text.c_str());
    for (const auto& item : nrt["items"].GetArray()) Seed(item);
    kubeconfig = dir.File("kubeconfig");
    std::ofstream(kubeconfig) << server.Kubeconfig();
    // As the API server does: an evicted pod is deleted (here at once, as if it stopped at
    // once), unless a test keeps the pods listed.
    server.OnEvicted([this](const testing::RecordedEviction& e) {
      if (delete_evicted) pods.Delete(e.pod_namespace + "/" + e.name);
    });
  }

  void Seed(const rapidjson::Value& item) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    item.Accept(writer);
    const std::string kind = item["kind"].GetString();
    const std::string name = item["metadata"]["name"].GetString();
    const std::string ns = item["metadata"].HasMember("namespace")
                               ? std::string(item["metadata"]["namespace"].GetString()) + "/"
                               : "";
    testing::ObjectCollection& to = kind == "Node"                  ? nodes
                                    : kind == "Pod"                 ? pods
                                    : kind == "PodDisruptionBudget" ? pdbs
                                                                    : topologies;
    to.Seed(ns + name, buffer.GetString());
  }

  std::atomic<bool> delete_evicted{true};
  testing::TestApiServer server;
  testing::ObjectCollection nodes{
      server, {.path = "/api/v1/nodes", .kind = "Node", .api_version = "v1", .merge_patch = true}};
  testing::ObjectCollection pods{
      server, {.path = "/api/v1/pods", .kind = "Pod", .api_version = "v1", .namespaced = true}};
  testing::ObjectCollection pdbs{server,
                                 {.path = "/apis/policy/v1/poddisruptionbudgets",
                                  .kind = "PodDisruptionBudget",
                                  .api_version = "policy/v1",
                                  .namespaced = true}};
  testing::ObjectCollection replica_sets{server,
                                         {.path = "/apis/apps/v1/replicasets",
                                          .kind = "ReplicaSet",
                                          .api_version = "apps/v1",
                                          .namespaced = true}};
  testing::ObjectCollection replication_controllers{server,
                                                    {.path = "/api/v1/replicationcontrollers",
                                                     .kind = "ReplicationController",
                                                     .api_version = "v1",
                                                     .namespaced = true}};
  testing::ObjectCollection namespaces{
      server, {.path = "/api/v1/namespaces", .kind = "Namespace", .api_version = "v1"}};
  testing::ObjectCollection claims{server,
                                   {.path = "/api/v1/persistentvolumeclaims",
                                    .kind = "PersistentVolumeClaim",
                                    .api_version = "v1",
                                    .namespaced = true}};
  testing::ObjectCollection volumes{
      server,
      {.path = "/api/v1/persistentvolumes", .kind = "PersistentVolume", .api_version = "v1"}};
  testing::ObjectCollection csi_nodes{server,
                                      {.path = "/apis/storage.k8s.io/v1/csinodes",
                                       .kind = "CSINode",
                                       .api_version = "storage.k8s.io/v1"}};
  testing::ObjectCollection storage_classes{server,
                                            {.path = "/apis/storage.k8s.io/v1/storageclasses",
                                             .kind = "StorageClass",
                                             .api_version = "storage.k8s.io/v1"}};
  testing::ObjectCollection topologies{
      server,
      {.path = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies",
       .kind = "NodeResourceTopology",
       .api_version = "topology.node.k8s.io/v1alpha2",
       .status_subresource = false}};
  std::string kubeconfig;
};

std::vector<std::string> Execute(const LiveCluster& cluster, std::vector<std::string> extra) {
  std::vector<std::string> argv = {
      QRM_DRAIN_PLANNER,         "execute", "--kubeconfig",     cluster.kubeconfig,
      "--max-drain-parallelism", "2",       "--retry-interval", "50ms"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

TEST_CASE("execute plans from the API server then cordons and evicts", "[drain][cli]") {
  testing::TempDir dir;
  LiveCluster cluster(dir);
  // The pods are still terminating (listed) when the next pass runs: execute does not wait.
  cluster.delete_evicted = false;
  const std::string state = dir.File("state.json");
  const auto run =
      RunProcess(Execute(cluster, {"--state", state, "--max-graceful-termination-sec", "0"}));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.output, Contains("default/db-1                             -> dst-whole"));
  CHECK_THAT(run.output, Contains("Execution: complete"));
  std::vector<std::string> evicted;
  for (const auto& e : cluster.server.evictions()) evicted.push_back(e.name);
  std::sort(evicted.begin(), evicted.end());
  CHECK(evicted == std::vector<std::string>{"db-1", "db-2", "web-1", "web-2"});
  for (const char* node : {"src-1", "src-2"}) {
    const std::string json = cluster.nodes.Get(node).value_or("");
    CHECK_THAT(json, Contains(R"("unschedulable":true)"));
    CHECK_THAT(json, Contains(R"("key":"qrm.io/drain")"));
  }
  CHECK_THAT(cluster.nodes.Get("dst-whole").value_or(""), !Contains("qrm.io/drain"));
  std::ifstream in(state);
  const std::string saved{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  CHECK_THAT(saved, Contains(R"("deletedNodes":["src-1","src-2"])"));
  CHECK_THAT(saved, Contains(R"("name":"db-1")"));

  // The next pass: the cordoned nodes are being drained (their pods, still listed, are placed
  // first) and nothing else can go.
  const auto next = RunProcess({QRM_DRAIN_PLANNER, "plan", "--kubeconfig", cluster.kubeconfig,
                                "--state", state, "--output", "json"});
  INFO(next.output);
  REQUIRE(next.exit_code == 0);
  rapidjson::Document doc = Json(next.output);
  CHECK(doc["reinjected"].Size() == 4);
  CHECK(doc["candidates"].Size() == 0);
}

TEST_CASE("execute waits until the evicted pods are gone from their nodes", "[drain][cli]") {
  testing::TempDir dir;
  LiveCluster cluster(dir);
  const auto run = RunProcess(Execute(cluster, {}));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.output, Contains("Execution: complete"));
  CHECK_THAT(run.output, Contains("default/db-1"));
  CHECK_THAT(run.output, Contains("evicted after 1 attempt(s), gone from the node"));
  for (const char* pod : {"default/db-1", "default/db-2", "default/web-1", "default/web-2"}) {
    CHECK_FALSE(cluster.pods.Get(pod).has_value());
  }
}

TEST_CASE("execute reports a node a PDB keeps incomplete", "[drain][cli]") {
  testing::TempDir dir;
  LiveCluster cluster(dir);
  cluster.server.SetEvictionAnswer("default", "db-2", testing::EvictionAnswer::kBudget);
  const auto run = RunProcess(Execute(cluster, {"--eviction-timeout", "300ms"}));
  INFO(run.output);
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.output, Contains("Execution: incomplete"));
  CHECK_THAT(run.output, Contains("default/db-2"));
  CHECK_THAT(run.output, Contains("blocked"));
}

}  // namespace
}  // namespace qrm
