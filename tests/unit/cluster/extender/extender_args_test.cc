// Decoding what kube-scheduler posts to an extender (golden/README.md says which upstream
// struct each file follows), and every way a request can be refused.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cluster/extender/extender_codec.h"
#include "cluster/extender/kube_objects_json.h"
#include "testing/temp_dir.h"

namespace qrm::extender {
namespace {

using Catch::Matchers::Contains;

std::string Golden(const std::string& name) {
  return qrm::testing::ReadFile(std::string(QRM_EXTENDER_GOLDEN) + "/" + name);
}

Quantity Q(const std::string& text) {
  StatusOr<Quantity> q = Quantity::Parse(text);
  REQUIRE(q.ok());
  return *q;
}

ExtenderArgs MustDecode(std::string_view json) {
  StatusOr<ExtenderArgs> args = DecodeExtenderArgs(json);
  INFO(json);
  REQUIRE(args.ok());
  return *args;
}

std::string Refusal(std::string_view json) {
  StatusOr<ExtenderArgs> args = DecodeExtenderArgs(json);
  INFO(json);
  REQUIRE_FALSE(args.ok());
  CHECK(args.status().code() == StatusCode::kInvalidArgument);
  return args.status().message();
}

TEST_CASE("extender args from kube-scheduler for a node cache capable extender") {
  const ExtenderArgs args = MustDecode(Golden("extender_args_nodenames.json"));
  CHECK_FALSE(args.nodes.has_value());
  REQUIRE(args.node_names.has_value());
  CHECK(*args.node_names == std::vector<std::string>{"node-a", "node-b", "node-c"});
  REQUIRE(args.pod.has_value());
  const Pod& pod = *args.pod;
  CHECK(pod.metadata.name == "trainer-7d9f8c6b5-x2kqz");
  CHECK(pod.metadata.namespace_name == "ml");
  CHECK(pod.metadata.uid == "5f0c2a8e-3b1d-4c7e-9a6f-2d8e1b7c4a90");
  CHECK(pod.metadata.creation_timestamp == "2024-05-01T10:15:30Z");
  CHECK(pod.metadata.labels.size() == 3);
  CHECK(pod.metadata.labels.at("qrm.io/pool") == "dedicated");
  CHECK(pod.metadata.annotations.at("qrm.io/numa-binding") == "true");
  CHECK(pod.spec.node_name.empty());
  CHECK(pod.spec.priority == 100000);
  CHECK(pod.spec.priority_class_name == "ml-high");
  REQUIRE(pod.spec.containers.size() == 2);
  const Container& trainer = pod.spec.containers[0];
  CHECK(trainer.name == "trainer");
  CHECK(trainer.resources.requests.at("cpu") == Q("8"));
  CHECK(trainer.resources.requests.at("memory").ToString() == "32Gi");
  CHECK(trainer.resources.limits.at("nvidia.com/gpu") == Q("1"));
  const Container& shipper = pod.spec.containers[1];
  CHECK(shipper.resources.requests.at("cpu").MilliValue() == 50);
  CHECK(shipper.resources.limits.count("cpu") == 0);
  REQUIRE(pod.spec.init_containers.size() == 1);
  CHECK(pod.spec.init_containers[0].name == "fetch-dataset");
  CHECK(pod.spec.init_containers[0].resources.limits.at("memory") == Q("256Mi"));
  CHECK(pod.spec.overhead.at("cpu") == Q("250m"));
  CHECK(pod.spec.overhead.at("memory") == Q("120Mi"));
  CHECK(pod.status.phase == "Pending");
}

TEST_CASE("extender args from kube-scheduler for an extender without a node cache") {
  const ExtenderArgs args = MustDecode(Golden("extender_args_nodes.json"));
  CHECK_FALSE(args.node_names.has_value());
  REQUIRE(args.pod.has_value());
  CHECK(args.pod->metadata.name == "web-0");
  CHECK(args.pod->spec.priority == 0);
  CHECK(args.pod->spec.containers.at(0).resources.requests.at("memory") == Q("64Mi"));
  CHECK(args.pod->spec.init_containers.empty());
  REQUIRE(args.nodes.has_value());
  REQUIRE(args.nodes->items.size() == 2);
  const Node& a = args.nodes->items[0];
  CHECK(a.metadata.name == "node-a");
  CHECK(a.metadata.labels.at("topology.kubernetes.io/zone") == "eu-west-1a");
  CHECK(a.status.capacity.at("cpu") == Q("16"));
  CHECK(a.status.capacity.at("memory") == Q("65023876Ki"));
  CHECK(a.status.allocatable.at("cpu").MilliValue() == 15890);
  CHECK(a.status.allocatable.at("ephemeral-storage").Value() == 93478772582);
  CHECK(a.status.allocatable.at("hugepages-1Gi") == Quantity());
  const Node& b = args.nodes->items[1];
  CHECK(b.metadata.labels.at("qrm.io/pool") == "shared");
  CHECK(b.status.allocatable.at("memory").ToString() == "31Gi");
  // Each node keeps its whole object (taints, conditions, nodeInfo) for the answer.
  CHECK_THAT(a.json, Contains("\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}}"));
  CHECK_THAT(b.json, Contains("\"taints\":[{\"key\":\"dedicated\""));
}

TEST_CASE("extender args read the lower-case keys of older extenders' tags") {
  // Go's decoder matches keys whatever their case: {"pod":...,"nodenames":[...]} is the same
  // request, as extenders written against the pre-2020 in-tree types send in their tests.
  const ExtenderArgs args =
      MustDecode(R"({"pod":{"metadata":{"name":"p"}},"nodes":null,"nodenames":["n1"]})");
  REQUIRE(args.pod.has_value());
  CHECK(args.pod->metadata.name == "p");
  CHECK_FALSE(args.nodes.has_value());
  CHECK(args.node_names == std::vector<std::string>{"n1"});
  const ExtenderArgs upper = MustDecode(R"({"POD":{"METADATA":{"NAME":"p"}},"NODENAMES":[]})");
  CHECK(upper.pod->metadata.name == "p");
}

TEST_CASE("extender args keep absent and null apart from empty") {
  const ExtenderArgs none = MustDecode("{}");
  CHECK_FALSE(none.pod.has_value());
  CHECK_FALSE(none.nodes.has_value());
  CHECK_FALSE(none.node_names.has_value());
  const ExtenderArgs nulls = MustDecode(R"({"Pod":null,"Nodes":null,"NodeNames":null})");
  CHECK_FALSE(nulls.pod.has_value());
  CHECK_FALSE(nulls.nodes.has_value());
  CHECK_FALSE(nulls.node_names.has_value());
  // kube-scheduler with no candidate node sends an empty slice, or a NodeList whose items are
  // null (it appends to a nil slice).
  const ExtenderArgs empty =
      MustDecode(R"({"Pod":{},"Nodes":{"metadata":{},"items":null},"NodeNames":[]})");
  CHECK(empty.pod.has_value());
  REQUIRE(empty.nodes.has_value());
  CHECK(empty.nodes->items.empty());
  REQUIRE(empty.node_names.has_value());
  CHECK(empty.node_names->empty());
  CHECK_FALSE(MustDecode("null").pod.has_value());  // Go: a null document changes nothing
}

TEST_CASE("extender args read absent pod fields as their zero values") {
  const ExtenderArgs args = MustDecode(
      R"({"Pod":{"metadata":{"name":"p","creationTimestamp":null,"labels":null},
                 "spec":{"priority":null,"containers":[{"name":"c","resources":{}}],
                         "overhead":null},
                 "status":{}}})");
  const Pod& pod = *args.pod;
  CHECK(pod.metadata.creation_timestamp.empty());
  CHECK(pod.metadata.labels.empty());
  CHECK_FALSE(pod.spec.priority.has_value());
  CHECK(pod.spec.containers.at(0).resources.requests.empty());
  CHECK(pod.spec.overhead.empty());
  CHECK(pod.status.phase.empty());
}

TEST_CASE("extender args apply a key given twice as Go does") {
  // Objects merge, maps add, lists are replaced, the last scalar wins.
  const ExtenderArgs args = MustDecode(
      R"({"Pod":{"metadata":{"name":"a","labels":{"x":"1"}},
                 "metadata":{"labels":{"y":"2"}},
                 "spec":{"priority":5,"containers":[{"name":"c1"},{"name":"c2"}]}},
          "pod":{"spec":{"containers":[{"name":"c3"}]}},
          "NodeNames":["a"],"nodenames":["b","c"]})");
  const Pod& pod = *args.pod;
  CHECK(pod.metadata.name == "a");
  CHECK(pod.metadata.labels == std::map<std::string, std::string>{{"x", "1"}, {"y", "2"}});
  CHECK(pod.spec.priority == 5);
  REQUIRE(pod.spec.containers.size() == 1);
  CHECK(pod.spec.containers[0].name == "c3");
  CHECK(args.node_names == std::vector<std::string>{"b", "c"});
}

TEST_CASE("extender args accept the creation times Go's RFC 3339 parser accepts") {
  for (const char* time :
       {"2024-05-01T10:15:30Z", "2024-05-01T10:15:30.123456789Z", "2024-05-01T10:15:30+02:00",
        "2024-02-29T00:00:00-07:30", "2024-05-01T1:15:30Z", "2024-05-01T10:15:30,5Z"}) {
    INFO(time);
    CHECK(IsRfc3339Time(time));
  }
  for (const char* time :
       {"2024-05-01", "2024-05-01 10:15:30Z", "2024-05-01T10:15:30", "2023-02-29T00:00:00Z",
        "2024-13-01T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T10:60:00Z",
        "2024-05-01T10:15:30z", "2024-05-01T10:15:30+0200", "24-05-01T10:15:30Z",
        "2024-05-01T10:15:30.Z", ""}) {
    INFO(time);
    CHECK_FALSE(IsRfc3339Time(time));
  }
}

TEST_CASE("extender args name the path and the value of a malformed quantity") {
  const std::string pod_with = R"({"Pod":{"spec":{"containers":[{"name":"a"},
      {"name":"b","resources":{"requests":{"cpu":"12x"}}}]}}})";
  CHECK(Refusal(pod_with) ==
        "ExtenderArgs: Pod.spec.containers[1].resources.requests.cpu: \"12x\" is not a "
        "quantity: not a number with an optional suffix "
        "(^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$)");
  CHECK(
      Refusal(
          R"({"pod":{"spec":{"initContainers":[{"resources":{"limits":{"nvidia.com/gpu":"1i"}}}]}}})") ==
      "ExtenderArgs: pod.spec.initContainers[0].resources.limits.\"nvidia.com/gpu\": \"1i\" is "
      "not a quantity: unknown suffix \"i\"");
  CHECK(Refusal(R"({"Pod":{"spec":{"overhead":{"cpu":true}}}})") ==
        "ExtenderArgs: Pod.spec.overhead.cpu: expected a quantity, got true");
  CHECK(Refusal(R"({"Nodes":{"items":[{"status":{"allocatable":{"memory":"Ei"}}}]}})") ==
        "ExtenderArgs: Nodes.items[0].status.allocatable.memory: \"Ei\" is not a quantity: no "
        "digits");
  CHECK(Refusal(R"({"Nodes":{"items":[{},{"status":{"capacity":{"cpu":[]}}}]}})") ==
        "ExtenderArgs: Nodes.items[1].status.capacity.cpu: expected a quantity, got an array");
}

TEST_CASE("extender args refuse every wrong JSON type with its path") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"[]", "ExtenderArgs: (top): expected an object, got an array"},
      {R"({"Pod":"web-0"})", "ExtenderArgs: Pod: expected an object, got \"web-0\""},
      {R"({"Pod":{"metadata":[]}})",
       "ExtenderArgs: Pod.metadata: expected an object, got an array"},
      {R"({"Pod":{"metadata":{"name":5}}})",
       "ExtenderArgs: Pod.metadata.name: expected a string, got 5"},
      {R"({"Pod":{"metadata":{"namespace":false}}})",
       "ExtenderArgs: Pod.metadata.namespace: expected a string, got false"},
      {R"({"Pod":{"metadata":{"uid":{}}}})",
       "ExtenderArgs: Pod.metadata.uid: expected a string, got an object"},
      {R"({"Pod":{"metadata":{"labels":["a"]}}})",
       "ExtenderArgs: Pod.metadata.labels: expected an object, got an array"},
      {R"({"Pod":{"metadata":{"labels":{"app":1}}}})",
       "ExtenderArgs: Pod.metadata.labels.app: expected a string, got 1"},
      {R"({"Pod":{"metadata":{"annotations":{"a.b/c":{}}}}})",
       "ExtenderArgs: Pod.metadata.annotations.\"a.b/c\": expected a string, got an object"},
      {R"({"Pod":{"metadata":{"creationTimestamp":1714558530}}})",
       "ExtenderArgs: Pod.metadata.creationTimestamp: expected an RFC 3339 time string, got "
       "1714558530"},
      {R"({"Pod":{"metadata":{"creationTimestamp":"yesterday"}}})",
       "ExtenderArgs: Pod.metadata.creationTimestamp: \"yesterday\" is not an RFC 3339 time"},
      {R"({"Pod":{"spec":7}})", "ExtenderArgs: Pod.spec: expected an object, got 7"},
      {R"({"Pod":{"spec":{"nodeName":["n"]}}})",
       "ExtenderArgs: Pod.spec.nodeName: expected a string, got an array"},
      {R"({"Pod":{"spec":{"priority":"high"}}})",
       "ExtenderArgs: Pod.spec.priority: expected an int32, got \"high\""},
      {R"({"Pod":{"spec":{"priority":1.5}}})",
       "ExtenderArgs: Pod.spec.priority: expected an int32, got 1.5"},
      {R"({"Pod":{"spec":{"priority":2147483648}}})",
       "ExtenderArgs: Pod.spec.priority: expected an int32, got 2147483648"},
      {R"({"Pod":{"spec":{"priorityClassName":0}}})",
       "ExtenderArgs: Pod.spec.priorityClassName: expected a string, got 0"},
      {R"({"Pod":{"spec":{"containers":{}}}})",
       "ExtenderArgs: Pod.spec.containers: expected an array, got an object"},
      {R"({"Pod":{"spec":{"containers":["app"]}}})",
       "ExtenderArgs: Pod.spec.containers[0]: expected an object, got \"app\""},
      {R"({"Pod":{"spec":{"containers":[{"name":null},{"name":2}]}}})",
       "ExtenderArgs: Pod.spec.containers[1].name: expected a string, got 2"},
      {R"({"Pod":{"spec":{"containers":[{"resources":[]}]}}})",
       "ExtenderArgs: Pod.spec.containers[0].resources: expected an object, got an array"},
      {R"({"Pod":{"spec":{"containers":[{"resources":{"requests":"1"}}]}}})",
       "ExtenderArgs: Pod.spec.containers[0].resources.requests: expected an object, got \"1\""},
      {R"({"Pod":{"spec":{"initContainers":true}}})",
       "ExtenderArgs: Pod.spec.initContainers: expected an array, got true"},
      {R"({"Pod":{"spec":{"overhead":[]}}})",
       "ExtenderArgs: Pod.spec.overhead: expected an object, got an array"},
      {R"({"Pod":{"status":{"phase":1}}})",
       "ExtenderArgs: Pod.status.phase: expected a string, got 1"},
      {R"({"Pod":{"status":"Running"}})",
       "ExtenderArgs: Pod.status: expected an object, got \"Running\""},
      {R"({"Nodes":[]})", "ExtenderArgs: Nodes: expected an object, got an array"},
      {R"({"Nodes":{"items":{}}})", "ExtenderArgs: Nodes.items: expected an array, got an object"},
      {R"({"Nodes":{"items":[1]}})", "ExtenderArgs: Nodes.items[0]: expected an object, got 1"},
      {R"({"Nodes":{"items":[{"metadata":{"name":1}}]}})",
       "ExtenderArgs: Nodes.items[0].metadata.name: expected a string, got 1"},
      {R"({"Nodes":{"items":[{"status":[]}]}})",
       "ExtenderArgs: Nodes.items[0].status: expected an object, got an array"},
      {R"({"NodeNames":"node-a"})", "ExtenderArgs: NodeNames: expected an array, got \"node-a\""},
      {R"({"NodeNames":["a",{}]})", "ExtenderArgs: NodeNames[1]: expected a string, got an object"},
      {R"({"nodenames":[1]})", "ExtenderArgs: nodenames[0]: expected a string, got 1"},
  };
  for (const auto& [json, message] : cases) CHECK(Refusal(json) == message);
}

TEST_CASE("extender args refuse JSON that is not one document") {
  CHECK(Refusal("") == "ExtenderArgs: invalid JSON at byte 0: The document is empty.");
  CHECK_THAT(Refusal(R"({"Pod":{"metadata":{"name":"p"}})"),
             Contains("ExtenderArgs: invalid JSON at byte 32: "));
  CHECK_THAT(Refusal(R"({"Pod":{}}{"Pod":{}})"), Contains("ExtenderArgs: invalid JSON at byte"));
  CHECK_THAT(Refusal("{\"Pod\":{\"metadata\":{\"name\":\"\xc3\x28\"}}}"),
             Contains("ExtenderArgs: invalid JSON at byte"));
  const std::string deep = "{\"Pod\":{\"x\":" + std::string(10001, '[') + "}}";
  CHECK_THAT(Refusal(deep), Contains("nested deeper than 10000 levels"));
}

TEST_CASE("extender args read what load-aware scheduling needs of a pod") {
  const ExtenderArgs args = MustDecode(
      R"({"Pod":{"metadata":{"name":"p","ownerReferences":[
                   {"apiVersion":"apps/v1","kind":"DaemonSet","name":"ds","uid":"u",
                    "controller":true,"blockOwnerDeletion":true},
                   {"kind":"ReplicaSet","name":"rs","controller":null},
                   {"kind":"Job","name":"j","controller":false}]},
                 "spec":{"initContainers":[{"name":"side","restartPolicy":"Always"},
                                           {"name":"init","restartPolicy":null}],
                         "resources":{"requests":{"cpu":"2"},"limits":{"memory":"1Gi"},
                                      "claims":[{"name":"x"}]}},
                 "status":{"phase":"Running","qosClass":"Burstable","hostIP":"10.0.0.1",
                           "conditions":[
                   {"type":"PodScheduled","status":"True","lastProbeTime":null,
                    "lastTransitionTime":"2024-05-01T10:15:30.5Z"},
                   {"type":"Initialized","status":"False","lastTransitionTime":null}]}}})");
  const Pod& pod = *args.pod;
  REQUIRE(pod.metadata.owner_references.size() == 3);
  CHECK(pod.metadata.owner_references[0].kind == "DaemonSet");
  CHECK(pod.metadata.owner_references[0].name == "ds");
  CHECK(pod.metadata.owner_references[0].controller == true);
  CHECK_FALSE(pod.metadata.owner_references[1].controller.has_value());
  CHECK(pod.metadata.owner_references[2].controller == false);
  REQUIRE(pod.spec.init_containers.size() == 2);
  CHECK(pod.spec.init_containers[0].restart_policy == "Always");
  CHECK_FALSE(pod.spec.init_containers[1].restart_policy.has_value());
  REQUIRE(pod.spec.resources.has_value());
  CHECK(pod.spec.resources->requests.at("cpu") == Q("2"));
  CHECK(pod.spec.resources->limits.at("memory") == Q("1Gi"));
  CHECK(pod.status.phase == "Running");
  CHECK(pod.status.qos_class == "Burstable");
  REQUIRE(pod.status.conditions.size() == 2);
  CHECK(pod.status.conditions[0].type == "PodScheduled");
  CHECK(pod.status.conditions[0].status == "True");
  CHECK(pod.status.conditions[0].last_transition_time == "2024-05-01T10:15:30.5Z");
  CHECK(pod.status.conditions[1].last_transition_time.empty());
}

TEST_CASE("extender args read the conditions and QoS class of the recorded pods") {
  const ExtenderArgs names = MustDecode(Golden("extender_args_nodenames.json"));
  REQUIRE(names.pod->status.conditions.size() == 1);
  CHECK(names.pod->status.conditions[0].type == "PodScheduled");
  CHECK(names.pod->status.conditions[0].status == "False");
  CHECK(names.pod->status.qos_class == "Burstable");
  CHECK_FALSE(names.pod->spec.resources.has_value());
  const ExtenderArgs nodes = MustDecode(Golden("extender_args_nodes.json"));
  REQUIRE(nodes.pod->metadata.owner_references.size() == 1);
  CHECK(nodes.pod->metadata.owner_references[0].kind == "StatefulSet");
  CHECK(nodes.pod->metadata.owner_references[0].controller == true);
}

TEST_CASE("extender args keep null pod-level resources apart from empty ones") {
  CHECK_FALSE(MustDecode(R"({"Pod":{"spec":{"resources":null}}})").pod->spec.resources);
  const ExtenderArgs empty = MustDecode(R"({"Pod":{"spec":{"resources":{}}}})");
  REQUIRE(empty.pod->spec.resources.has_value());
  CHECK(empty.pod->spec.resources->requests.empty());
  // A key given twice merges into the pointer's struct, as Go does.
  const ExtenderArgs twice = MustDecode(
      R"({"Pod":{"spec":{"resources":{"requests":{"cpu":"1"}},
                         "resources":{"limits":{"cpu":"2"}}}}})");
  CHECK(twice.pod->spec.resources->requests.at("cpu") == Q("1"));
  CHECK(twice.pod->spec.resources->limits.at("cpu") == Q("2"));
}

TEST_CASE("extender args refuse wrong types in the load-aware pod fields") {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"Pod":{"metadata":{"ownerReferences":{}}}})",
       "ExtenderArgs: Pod.metadata.ownerReferences: expected an array, got an object"},
      {R"({"Pod":{"metadata":{"ownerReferences":[{"controller":"true"}]}}})",
       "ExtenderArgs: Pod.metadata.ownerReferences[0].controller: expected a boolean, got "
       "\"true\""},
      {R"({"Pod":{"metadata":{"ownerReferences":[{"kind":1}]}}})",
       "ExtenderArgs: Pod.metadata.ownerReferences[0].kind: expected a string, got 1"},
      {R"({"Pod":{"spec":{"initContainers":[{"restartPolicy":true}]}}})",
       "ExtenderArgs: Pod.spec.initContainers[0].restartPolicy: expected a string, got true"},
      {R"({"Pod":{"spec":{"resources":[]}}})",
       "ExtenderArgs: Pod.spec.resources: expected an object, got an array"},
      {R"({"Pod":{"spec":{"resources":{"requests":{"cpu":"x"}}}}})",
       "ExtenderArgs: Pod.spec.resources.requests.cpu: \"x\" is not a quantity: not a number "
       "with an optional suffix (^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$)"},
      {R"({"Pod":{"status":{"qosClass":2}}})",
       "ExtenderArgs: Pod.status.qosClass: expected a string, got 2"},
      {R"({"Pod":{"status":{"conditions":{}}}})",
       "ExtenderArgs: Pod.status.conditions: expected an array, got an object"},
      {R"({"Pod":{"status":{"conditions":[{"status":false}]}}})",
       "ExtenderArgs: Pod.status.conditions[0].status: expected a string, got false"},
      {R"({"Pod":{"status":{"conditions":[{"lastTransitionTime":"now"}]}}})",
       "ExtenderArgs: Pod.status.conditions[0].lastTransitionTime: \"now\" is not an RFC 3339 "
       "time"},
  };
  for (const auto& [json, message] : cases) CHECK(Refusal(json) == message);
}

}  // namespace
}  // namespace qrm::extender
