// Encoding the extender verbs' answers byte for byte as json.Marshal writes the upstream
// structs (golden/README.md), reading them back, and the preempt and bind requests.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "cluster/extender/extender_codec.h"
#include "testing/temp_dir.h"

namespace qrm::extender {
namespace {

using Catch::Matchers::Contains;

// A golden file's text without the file's last newline.
std::string Golden(const std::string& name) {
  std::string text = qrm::testing::ReadFile(std::string(QRM_EXTENDER_GOLDEN) + "/" + name);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

template <typename T>
T Must(StatusOr<T> v) {
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  return std::move(*v);
}

// The same JSON value (key order, spacing and number spelling aside).
bool SameJson(const std::string& a, const std::string& b) {
  rapidjson::Document da, db;
  da.Parse(a.data(), a.size());
  db.Parse(b.data(), b.size());
  return !da.HasParseError() && !db.HasParseError() && da == db;
}

ExtenderFilterResult FilterByName() {
  ExtenderFilterResult r;
  r.node_names = std::vector<std::string>{"node-a", "node-c"};
  r.failed_nodes = FailedNodesMap{{"node-b", "qrm: no NUMA node has 8 free CPUs & 32Gi"}};
  r.failed_and_unresolvable_nodes = FailedNodesMap{{"node-d", "qrm: node has no <dedicated> pool"}};
  return r;
}

TEST_CASE("extender filter result is written as Go writes the upstream struct") {
  CHECK(EncodeExtenderFilterResult(FilterByName()) == Golden("extender_filter_result.json"));
}

TEST_CASE("extender filter result writes nil as null and empty as empty") {
  CHECK(
      EncodeExtenderFilterResult({}) ==
      R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":""})");
  ExtenderFilterResult empty;
  empty.nodes = NodeList{};
  empty.node_names = std::vector<std::string>{};
  empty.failed_nodes = FailedNodesMap{};
  empty.failed_and_unresolvable_nodes = FailedNodesMap{};
  empty.error = "extender: cache not warm";
  CHECK(EncodeExtenderFilterResult(empty) ==
        R"({"Nodes":{"metadata":{},"items":[]},"NodeNames":[],"FailedNodes":{},)"
        R"("FailedAndUnresolvableNodes":{},"Error":"extender: cache not warm"})");
}

TEST_CASE("extender filter result round trips") {
  const std::string json = Golden("extender_filter_result.json");
  const ExtenderFilterResult r = Must(DecodeExtenderFilterResult(json));
  CHECK(r.node_names == std::vector<std::string>{"node-a", "node-c"});
  CHECK(r.failed_nodes->at("node-b") == "qrm: no NUMA node has 8 free CPUs & 32Gi");
  CHECK_FALSE(r.nodes.has_value());
  CHECK(EncodeExtenderFilterResult(r) == json);
  const std::string empty = EncodeExtenderFilterResult({});
  CHECK(EncodeExtenderFilterResult(Must(DecodeExtenderFilterResult(empty))) == empty);
}

TEST_CASE("extender filter result passes the nodes it was given back whole") {
  const ExtenderArgs args = Must(DecodeExtenderArgs(
      qrm::testing::ReadFile(std::string(QRM_EXTENDER_GOLDEN) + "/extender_args_nodes.json")));
  ExtenderFilterResult r;
  r.nodes = NodeList{{args.nodes->items[1]}};
  r.failed_nodes = FailedNodesMap{{"node-a", "no free NUMA node"}};
  const std::string json = EncodeExtenderFilterResult(r);
  rapidjson::Document in, out;
  const std::string golden = Golden("extender_args_nodes.json");
  in.Parse(golden.data(), golden.size());
  out.Parse(json.data(), json.size());
  REQUIRE_FALSE(out.HasParseError());
  // node-b exactly as kube-scheduler sent it: taints, conditions and all.
  CHECK(out["Nodes"]["items"][0] == in["Nodes"]["items"][1]);
  CHECK(out["Nodes"]["metadata"].ObjectEmpty());
  CHECK(out["NodeNames"].IsNull());
  // Read back, the node has its fields and its text again.
  const ExtenderFilterResult back = Must(DecodeExtenderFilterResult(json));
  REQUIRE(back.nodes->items.size() == 1);
  CHECK(back.nodes->items[0].metadata.name == "node-b");
  CHECK(back.nodes->items[0].status.allocatable.at("cpu") == Quantity::FromMilli(7800));
  CHECK(SameJson(back.nodes->items[0].json, args.nodes->items[1].json));
}

TEST_CASE("extender filter result writes a node built here from its fields") {
  Node node;
  node.metadata.name = "node-x";
  node.metadata.labels = {{"zone", "a"}};
  node.status.capacity = {{"cpu", Quantity::FromInt(8, QuantityFormat::kDecimalSI)}};
  node.status.allocatable = {{"cpu", Quantity::FromMilli(7500)},
                             {"memory", Quantity::FromInt(1 << 30)}};
  ExtenderFilterResult r;
  r.nodes = NodeList{{node}};
  CHECK(EncodeExtenderFilterResult(r) ==
        R"({"Nodes":{"metadata":{},"items":[{"metadata":{"name":"node-x","labels":{"zone":"a"}},)"
        R"("status":{"capacity":{"cpu":"8"},"allocatable":{"cpu":"7500m","memory":"1Gi"}}}]},)"
        R"("NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":""})");
  const ExtenderFilterResult back = Must(DecodeExtenderFilterResult(EncodeExtenderFilterResult(r)));
  CHECK(back.nodes->items.at(0).status.allocatable.at("memory") == Quantity::FromInt(1 << 30));
}

TEST_CASE("extender filter result reads the lower-case keys of older extenders") {
  const ExtenderFilterResult r =
      Must(DecodeExtenderFilterResult(Golden("extender_filter_result_legacy.json")));
  CHECK_FALSE(r.nodes.has_value());
  CHECK(r.node_names == std::vector<std::string>{"node-a"});
  CHECK(r.failed_nodes == FailedNodesMap{{"node-b", "insufficient qrm.io/numa-cpu"}});
  CHECK_FALSE(r.failed_and_unresolvable_nodes.has_value());
  CHECK(r.error.empty());
}

TEST_CASE("extender host priority list is written as Go writes it") {
  CHECK(kMinExtenderPriority == 0);
  CHECK(kMaxExtenderPriority == 10);
  const HostPriorityList list = {{"node-a", kMaxExtenderPriority}, {"node-c", 3}};
  CHECK(EncodeHostPriorityList(list) == Golden("host_priority_list.json"));
  CHECK(EncodeHostPriorityList({}) == "[]");
  const HostPriorityList back = Must(DecodeHostPriorityList(Golden("host_priority_list.json")));
  REQUIRE(back.size() == 2);
  CHECK(back[0].host == "node-a");
  CHECK(back[0].score == 10);
  CHECK(EncodeHostPriorityList(back) == Golden("host_priority_list.json"));
  CHECK(Must(DecodeHostPriorityList("null")).empty());
  CHECK(Must(DecodeHostPriorityList(R"([{"host":"n","score":-3}])"))[0].score == -3);
}

TEST_CASE("extender preemption args by victim UID") {
  const ExtenderPreemptionArgs args =
      Must(DecodeExtenderPreemptionArgs(Golden("extender_preemption_args_meta.json")));
  REQUIRE(args.pod.has_value());
  CHECK(args.pod->spec.priority == 2000000000);
  CHECK(args.pod->spec.containers.at(0).resources.requests.at("cpu") == Quantity::FromInt(4));
  CHECK_FALSE(args.node_name_to_victims.has_value());
  REQUIRE(args.node_name_to_meta_victims.has_value());
  const MetaVictims& a = args.node_name_to_meta_victims->at("node-a");
  REQUIRE(a.pods.size() == 2);
  CHECK(a.pods[1].uid == "9d1c6a8e-0002-4000-8000-00000000bbbb");
  CHECK(a.num_pdb_violations == 1);
  CHECK(args.node_name_to_meta_victims->at("node-b").num_pdb_violations == 0);
}

TEST_CASE("extender preemption args with whole victim pods") {
  const ExtenderPreemptionArgs args =
      Must(DecodeExtenderPreemptionArgs(Golden("extender_preemption_args_victims.json")));
  CHECK_FALSE(args.node_name_to_meta_victims.has_value());
  REQUIRE(args.node_name_to_victims.has_value());
  const Victims& v = args.node_name_to_victims->at("node-a");
  REQUIRE(v.pods.size() == 1);
  CHECK(v.pods[0].metadata.name == "batch-1");
  CHECK(v.pods[0].spec.node_name == "node-a");
  CHECK(v.pods[0].status.phase == "Running");
  CHECK(v.pods[0].spec.containers.at(0).resources.requests.at("memory") ==
        Quantity::FromInt(6LL << 30));
  // A null victim (Go's nil pointer) reads as an empty one.
  const ExtenderPreemptionArgs nulls = Must(DecodeExtenderPreemptionArgs(
      R"({"NodeNameToVictims":{"n":null,"m":{"Pods":[null]}},"NodeNameToMetaVictims":{}})"));
  CHECK(nulls.node_name_to_victims->at("n").pods.empty());
  CHECK(nulls.node_name_to_victims->at("m").pods.at(0).metadata.name.empty());
  CHECK(nulls.node_name_to_meta_victims->empty());
}

TEST_CASE("extender preemption result is written as Go writes it and round trips") {
  ExtenderPreemptionResult r;
  r.node_name_to_meta_victims = std::map<std::string, MetaVictims>{
      {"node-b", MetaVictims{{}, 2}},
      {"node-a", MetaVictims{{MetaPod{"9d1c6a8e-0001-4000-8000-00000000aaaa"}}, 0}},
  };
  const std::string golden = Golden("extender_preemption_result.json");
  CHECK(EncodeExtenderPreemptionResult(r) == golden);
  CHECK(EncodeExtenderPreemptionResult(Must(DecodeExtenderPreemptionResult(golden))) == golden);
  CHECK(EncodeExtenderPreemptionResult({}) == R"({"NodeNameToMetaVictims":null})");
  CHECK_FALSE(Must(DecodeExtenderPreemptionResult(R"({"NodeNameToMetaVictims":null})"))
                  .node_name_to_meta_victims.has_value());
}

TEST_CASE("extender binding args and result round trip") {
  const ExtenderBindingArgs args =
      Must(DecodeExtenderBindingArgs(Golden("extender_binding_args.json")));
  CHECK(args.pod_name == "web-0");
  CHECK(args.pod_namespace == "default");
  CHECK(args.pod_uid == "0e8b3c52-6d4f-4b1a-8f2e-7c9d5a3b1e64");
  CHECK(args.node == "node-a");
  CHECK(EncodeExtenderBindingArgs(args) == Golden("extender_binding_args.json"));
  CHECK(EncodeExtenderBindingResult({}) == Golden("extender_binding_result.json"));
  const ExtenderBindingResult failed{"node-a is \"gone\"\n"};
  const std::string json = EncodeExtenderBindingResult(failed);
  CHECK(json == R"({"Error":"node-a is \"gone\"\n"})");
  CHECK(Must(DecodeExtenderBindingResult(json)).error == failed.error);
}

TEST_CASE("extender answers and requests refuse wrong JSON types with their path") {
  const auto message = [](const Status& s) {
    CHECK(s.code() == StatusCode::kInvalidArgument);
    return s.message();
  };
  CHECK(message(DecodeHostPriorityList(R"({"Host":"a"})").status()) ==
        "HostPriorityList: (top): expected an array, got an object");
  CHECK(message(DecodeHostPriorityList(R"([{"Host":"a","Score":"10"}])").status()) ==
        "HostPriorityList: [0].Score: expected an int64, got \"10\"");
  CHECK(message(DecodeHostPriorityList(R"([{"Host":"a","Score":9.5}])").status()) ==
        "HostPriorityList: [0].Score: expected an int64, got 9.5");
  CHECK(message(DecodeHostPriorityList(R"([{"Host":1}])").status()) ==
        "HostPriorityList: [0].Host: expected a string, got 1");
  CHECK(message(DecodeExtenderFilterResult(R"({"FailedNodes":{"n":1}})").status()) ==
        "ExtenderFilterResult: FailedNodes.n: expected a string, got 1");
  CHECK(message(DecodeExtenderFilterResult(R"({"FailedAndUnresolvableNodes":[]})").status()) ==
        "ExtenderFilterResult: FailedAndUnresolvableNodes: expected an object, got an array");
  CHECK(message(DecodeExtenderFilterResult(R"({"Error":null,"error":{}})").status()) ==
        "ExtenderFilterResult: error: expected a string, got an object");
  CHECK(message(DecodeExtenderFilterResult(R"({"NodeNames":{}})").status()) ==
        "ExtenderFilterResult: NodeNames: expected an array, got an object");
  CHECK(message(DecodeExtenderPreemptionArgs(R"({"NodeNameToMetaVictims":{"n":{"Pods":{}}}})")
                    .status()) ==
        "ExtenderPreemptionArgs: NodeNameToMetaVictims.n.Pods: expected an array, got an object");
  CHECK(message(
            DecodeExtenderPreemptionArgs(R"({"NodeNameToMetaVictims":{"n":{"Pods":[{"UID":7}]}}})")
                .status()) ==
        "ExtenderPreemptionArgs: NodeNameToMetaVictims.n.Pods[0].UID: expected a string, got 7");
  CHECK(message(
            DecodeExtenderPreemptionArgs(R"({"NodeNameToVictims":{"n":{"NumPDBViolations":0.5}}})")
                .status()) ==
        "ExtenderPreemptionArgs: NodeNameToVictims.n.NumPDBViolations: expected an int64, got 0.5");
  CHECK(message(DecodeExtenderPreemptionArgs(
                    R"({"NodeNameToVictims":{"n":{"Pods":[{"spec":{"priority":"x"}}]}}})")
                    .status()) ==
        "ExtenderPreemptionArgs: NodeNameToVictims.n.Pods[0].spec.priority: expected an int32, got "
        "\"x\"");
  CHECK(message(DecodeExtenderPreemptionArgs(R"({"NodeNameToVictims":[]})").status()) ==
        "ExtenderPreemptionArgs: NodeNameToVictims: expected an object, got an array");
  CHECK(message(DecodeExtenderPreemptionArgs(R"({"Pod":1})").status()) ==
        "ExtenderPreemptionArgs: Pod: expected an object, got 1");
  CHECK(message(DecodeExtenderPreemptionResult(R"({"NodeNameToMetaVictims":{"n":[]}})").status()) ==
        "ExtenderPreemptionResult: NodeNameToMetaVictims.n: expected an object, got an array");
  CHECK(message(DecodeExtenderBindingArgs(R"({"PodUID":5})").status()) ==
        "ExtenderBindingArgs: PodUID: expected a string, got 5");
  CHECK(message(DecodeExtenderBindingResult("[]").status()) ==
        "ExtenderBindingResult: (top): expected an object, got an array");
  CHECK_THAT(message(DecodeExtenderBindingResult("{").status()),
             Contains("ExtenderBindingResult: invalid JSON at byte 1: "));
}

}  // namespace
}  // namespace qrm::extender
