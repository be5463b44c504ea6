// Decoding kubectl's node, pod and PDB lists, and every way the input can be refused.
#include "cluster/drain/snapshot_json.h"

#include <catch2/catch.hpp>

#include "cluster/objects/meta_time.h"
#include "tests/unit/cluster/drain/fixtures.h"

namespace qrm::cluster::drain {
namespace {

using Catch::Matchers::Contains;

ClusterSnapshot FixtureCluster() {
  DecodeOptions options;
  options.node_group_label = "pool";
  return MustDecode({Fixture("nodes.json"), Fixture("pods.json"), Fixture("pdbs.json")}, options);
}

TEST_CASE("kubectl node lists decode with allocatable taints and node group") {
  ClusterSnapshot s = FixtureCluster();
  REQUIRE(s.nodes.size() == 2);
  const DrainNode* a = s.FindNode("node-a");
  REQUIRE(a != nullptr);
  CHECK(a->allocatable.cpu_milli == 15800);
  CHECK(a->allocatable.memory_bytes == 64LL << 30);
  CHECK(a->allocatable_pods == 110);
  CHECK(a->allocatable.extended.at("nvidia.com/gpu") == 2);
  CHECK(a->allocatable.extended.at("hugepages-2Mi") == 0);
  CHECK(a->allocatable.extended.count("pods") == 0);
  REQUIRE(a->taints.size() == 1);
  CHECK(a->taints[0].key == "dedicated");
  CHECK(a->taints[0].value == "db");
  CHECK(a->taints[0].effect == "NoSchedule");
  CHECK_FALSE(a->unschedulable);
  CHECK(a->node_group == std::optional<std::string>("numa-2"));
  CHECK(a->labels.at("kubernetes.io/os") == "linux");
  const DrainNode* b = s.FindNode("node-b");
  REQUIRE(b != nullptr);
  CHECK(b->unschedulable);
  CHECK(b->annotations.at("cluster-autoscaler.kubernetes.io/scale-down-disabled") == "true");
}

TEST_CASE("a pod's request is the kubelet's max of containers and init containers plus overhead") {
  ClusterSnapshot s = FixtureCluster();
  const DrainPod& web = s.pods.at(s.pod_index.at("default/web-1"));
  // containers 2 + 0.25 CPU < init 4 CPU; memory 1Gi + 128Mi > init 256Mi; plus overhead.
  CHECK(web.requests.cpu_milli == 4100);
  CHECK(web.requests.memory_bytes == (1152LL + 64) << 20);
  CHECK(web.requests.extended.at("nvidia.com/gpu") == 1);
}

TEST_CASE("pod metadata spec and qrm QoS annotations decode") {
  ClusterSnapshot s = FixtureCluster();
  const DrainPod& web = s.pods.at(s.pod_index.at("default/web-1"));
  CHECK(web.uid == "11111111-0000-4000-8000-000000000001");
  CHECK(web.node_name == "node-a");
  CHECK(web.phase == "Running");
  CHECK(web.priority == 1000);
  CHECK(web.grace_period_seconds == std::optional<int64_t>(45));
  CHECK(web.creation_time == ParseTime("2026-11-26T10:00:00Z").value());
  CHECK_FALSE(web.deletion_time);
  REQUIRE(web.Controller() != nullptr);
  CHECK(web.Controller()->kind == "ReplicaSet");
  CHECK(web.Controller()->name == "web-7d9f");
  CHECK(web.node_selector.at("kubernetes.io/os") == "linux");
  REQUIRE(web.tolerations.size() == 2);
  CHECK(web.tolerations[0].op == "Equal");
  CHECK(web.tolerations[1].op == "Exists");
  REQUIRE(web.required_affinity.size() == 1);
  const auto& exprs = web.required_affinity[0].match_expressions;
  REQUIRE(exprs.size() == 2);
  CHECK(exprs[0].op == SelectorOp::kIn);
  CHECK(exprs[0].values == std::vector<std::string>{"numa-2", "numa-4"});
  CHECK(exprs[1].op == SelectorOp::kGt);
  CHECK(web.qos_level == "dedicated_cores");
  CHECK(web.numa_binding);
  CHECK(web.numa_exclusive);
  CHECK_FALSE(web.is_mirror);
}

TEST_CASE("pod volumes decode by kind") {
  ClusterSnapshot s = FixtureCluster();
  const DrainPod& web = s.pods.at(s.pod_index.at("default/web-1"));
  REQUIRE(web.volumes.size() == 5);
  CHECK(web.volumes[0].kind == VolumeKind::kEmptyDir);
  CHECK(web.volumes[0].medium.empty());
  CHECK(web.volumes[1].kind == VolumeKind::kEmptyDir);
  CHECK(web.volumes[1].medium == "Memory");
  CHECK(web.volumes[2].kind == VolumeKind::kHostPath);
  CHECK(web.volumes[3].kind == VolumeKind::kPersistentVolumeClaim);
  CHECK(web.volumes[3].claim == "data-web-1");
  CHECK(web.volumes[4].kind == VolumeKind::kOther);
}

TEST_CASE("mirror pods and deletion timestamps decode") {
  ClusterSnapshot s = FixtureCluster();
  const DrainPod& etcd = s.pods.at(s.pod_index.at("kube-system/etcd-node-a"));
  CHECK(etcd.is_mirror);
  CHECK(etcd.deletion_time == ParseTime("2026-11-27T03:00:00Z").value());
  CHECK(etcd.qos_level.empty());
  CHECK(s.pods_by_node.at("node-a").size() == 2);
}

TEST_CASE("PDB selectors match by namespace and labels and a null selector matches nothing") {
  ClusterSnapshot s = FixtureCluster();
  REQUIRE(s.pdbs.size() == 2);
  const DrainPod& web = s.pods.at(s.pod_index.at("default/web-1"));
  std::vector<const DrainPdb*> pdbs = s.PdbsFor(web);
  REQUIRE(pdbs.size() == 1);
  CHECK(pdbs[0]->name == "web");
  CHECK(pdbs[0]->disruptions_allowed == 1);
  DrainPod other = web;
  other.namespace_ = "prod";
  CHECK(s.PdbsFor(other).empty());
  other = web;
  other.labels["tier"] = "front";  // DoesNotExist fails
  CHECK(s.PdbsFor(other).empty());
}

TEST_CASE("a kind List mixing nodes pods and PDBs decodes and an empty selector matches all") {
  ClusterSnapshot s = MustDecode({Fixture("mixed.json")});
  REQUIRE(s.nodes.size() == 1);
  REQUIRE(s.pods.size() == 1);
  REQUIRE(s.pdbs.size() == 1);
  CHECK(s.pods[0].phase == "Succeeded");
  CHECK(s.PdbsFor(s.pods[0]).size() == 1);
  CHECK(s.nodes[0].node_group == std::nullopt);
}

TEST_CASE("a single object document decodes as a list of one") {
  ClusterSnapshot s = MustDecode({{"node.json", NodeJson("n1")}});
  REQUIRE(s.nodes.size() == 1);
  CHECK(s.nodes[0].allocatable.cpu_milli == 4000);
}

TEST_CASE("selector operators match as Kubernetes does") {
  std::map<std::string, std::string> labels{{"zone", "a"}, {"cores", "16"}};
  auto req = [](std::string key, SelectorOp op, std::vector<std::string> values) {
    SelectorRequirement r;
    r.key = std::move(key);
    r.op = op;
    r.values = std::move(values);
    return r;
  };
  CHECK(RequirementMatches(req("zone", SelectorOp::kIn, {"a", "b"}), labels));
  CHECK_FALSE(RequirementMatches(req("zone", SelectorOp::kNotIn, {"a"}), labels));
  CHECK(RequirementMatches(req("rack", SelectorOp::kNotIn, {"a"}), labels));
  CHECK(RequirementMatches(req("zone", SelectorOp::kExists, {}), labels));
  CHECK(RequirementMatches(req("rack", SelectorOp::kDoesNotExist, {}), labels));
  CHECK(RequirementMatches(req("cores", SelectorOp::kGt, {"8"}), labels));
  CHECK_FALSE(RequirementMatches(req("cores", SelectorOp::kLt, {"8"}), labels));
  CHECK_FALSE(RequirementMatches(req("zone", SelectorOp::kGt, {"8"}), labels));
  CHECK_FALSE(RequirementMatches(req("zone", SelectorOp::kUnknown, {"a"}), labels));
}

// --- refused input -------------------------------------------------------------------------

std::string PodJson(const std::string& name, const std::string& spec) {
  return R"({"kind": "Pod", "metadata": {"name": ")" + name +
         R"(", "namespace": "default"}, "spec": )" + spec + "}";
}

TEST_CASE("a negative request names the pod and the field") {
  std::string msg = DecodeError({ListOf({PodJson(
      "web-1", R"({"containers": [{"name": "a", "resources": {"requests": {"cpu": "-1"}}}]})")})});
  CHECK_THAT(
      msg,
      Contains(
          R"(pod default/web-1: spec.containers[0].resources.requests.cpu: "-1" is negative)"));
  CHECK_THAT(msg, Contains("test.json: items[0]"));
}

TEST_CASE("a malformed quantity names the node and the field") {
  std::string msg = DecodeError({ListOf({NodeJson("n1", "12xyz")})});
  CHECK_THAT(msg, Contains(R"(node n1: status.allocatable.cpu: "12xyz" is not a quantity)"));
}

TEST_CASE("a field of the wrong JSON type is refused") {
  std::string msg = DecodeError({ListOf(
      {R"({"kind": "Node", "metadata": {"name": "n1"}, "spec": {"unschedulable": "yes"}})"})});
  CHECK_THAT(msg, Contains("node n1: spec.unschedulable: not a boolean"));
  msg = DecodeError({ListOf({PodJson("p", R"({"priority": "high"})")})});
  CHECK_THAT(msg, Contains("pod default/p: spec.priority"));
}

TEST_CASE("an object without a name is refused") {
  std::string msg = DecodeError({ListOf({R"({"kind": "Pod", "metadata": {"namespace": "x"}})"})});
  CHECK_THAT(msg, Contains("test.json: items[0]: metadata.name: missing"));
}

// A pod whose QoS does not resolve is no input error (qrm-host would refuse it, and the
// planner keeps it off qrm's nodes): it keeps the resolver's message, naming the annotation.
TEST_CASE("a pod whose QoS does not resolve keeps the reason, naming the annotation") {
  std::string pod = R"({"kind": "Pod", "metadata": {"name": "p", "namespace": "default",
      "annotations": {"katalyst.kubewharf.io/memory_enhancement": "{numa"}}})";
  ClusterSnapshot s = MustDecode({ListOf({pod})});
  const DrainPod& p = s.pods.at(0);
  CHECK_THAT(p.qos_error, Contains("annotation \"katalyst.kubewharf.io/memory_enhancement\": "
                                   "invalid value \"{numa\": not valid JSON"));
  CHECK_FALSE(p.numa_binding);
  std::string level = R"({"kind": "Pod", "metadata": {"name": "q", "namespace": "default",
      "annotations": {"katalyst.kubewharf.io/qos_level": "gold_cores"}}})";
  CHECK_THAT(MustDecode({ListOf({level})}).pods.at(0).qos_error, Contains("gold_cores"));
}

TEST_CASE("pod roles resolve through the planner's role table, as on the nodes") {
  DecodeOptions options;
  auto roles = qos::RoleTable::Parse(R"({
      "storage-service": {"qos_level": "dedicated_cores", "numa_binding": true,
                          "numa_exclusive": true, "numa_anti_affinity": ["reranker"]},
      "reranker": {"qos_level": "dedicated_cores", "numa_binding": true},
      "loner": {"qos_level": "shared_cores", "numa_binding": true, "numa_anti_affinity": ["*"]},
      "ETL": {"qos_level": "reclaimed_cores"}})");
  REQUIRE(roles.ok());
  options.roles = *roles;
  auto pod = [](const std::string& name, const std::string& meta) {
    return R"({"kind": "Pod", "metadata": {"name": ")" + name + R"(", "namespace": "default", )" +
           meta + "}}";
  };
  const ClusterSnapshot s = MustDecode(
      {ListOf({pod("store", R"("labels": {"katalyst.kubewharf.io/pod_role": "storage-service"})"),
               pod("etl", R"("annotations": {"kubernetes.io/pod-role": "ETL"})"),
               pod("plain", R"("labels": {"app": "web"})"),
               pod("stranger", R"("labels": {"katalyst.kubewharf.io/pod_role": "cache"})")})},
      options);
  const DrainPod& store = s.pods.at(s.pod_index.at("default/store"));
  CHECK(store.pod_role == "storage-service");
  CHECK(store.qos_level == "dedicated_cores");
  CHECK(store.numa_binding);
  CHECK(store.numa_exclusive);
  CHECK(store.qos_error.empty());
  // Anti-affine with reranker by its own list, and with loner by loner's "*".
  CHECK(store.anti_affine_roles == std::vector<std::string>{"loner", "reranker"});
  CHECK_FALSE(store.anti_affine_to_all_roles);
  const DrainPod& etl = s.pods.at(s.pod_index.at("default/etl"));
  CHECK(etl.qos_level == "reclaimed_cores");
  CHECK_FALSE(etl.numa_binding);
  const DrainPod& plain = s.pods.at(s.pod_index.at("default/plain"));
  CHECK(plain.qos_level.empty());
  CHECK(plain.qos_error.empty());
  // A role the table lacks does not resolve, on the nodes and here.
  CHECK_THAT(s.pods.at(s.pod_index.at("default/stranger")).qos_error, Contains("cache"));
  // Without the table, no role resolves.
  const ClusterSnapshot bare = MustDecode({ListOf(
      {pod("store", R"("labels": {"katalyst.kubewharf.io/pod_role": "storage-service"})")})});
  CHECK_THAT(bare.pods.at(0).qos_error, Contains("storage-service"));
}

TEST_CASE("documents that are not JSON or not a list we read are refused") {
  CHECK_THAT(DecodeError({{"pods.json", "{\"kind\": "}}), Contains("pods.json: not JSON"));
  CHECK_THAT(
      DecodeError({{"svc.json", R"({"kind": "SecretList", "items": []})"}}),
      Contains(
          R"(svc.json: kind: "SecretList" is not Node, Pod, PodDisruptionBudget, ReplicaSet, ReplicationController, Namespace, PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode or NodeResourceTopology)"));
  CHECK_THAT(DecodeError({ListOf({R"({"kind": "Secret", "metadata": {"name": "s"}})"})}),
             Contains(R"(items[0]: kind: "Secret" is not Node)"));
  std::string wrong =
      R"({"kind": "PodList", "items": [{"kind": "Node", "metadata": {"name": "n"}}]})";
  CHECK_THAT(DecodeError({{"pods.json", wrong}}),
             Contains(R"(pods.json: items[0]: kind: "Node" where "Pod" belongs)"));
  CHECK_THAT(
      DecodeError({ListOf({R"({"kind": "Pod", "apiVersion": "v2", "metadata": {"name": "p"}})"})}),
      Contains("apiVersion"));
}

TEST_CASE("up to twenty errors are collected into one message") {
  std::vector<std::string> items;
  for (int i = 0; i < 25; ++i) items.push_back(NodeJson("n" + std::to_string(i), "-1"));
  std::string msg = DecodeError({ListOf(items)});
  CHECK_THAT(msg, Contains("25 errors: "));
  CHECK_THAT(msg, Contains("node n0: status.allocatable.cpu"));
  CHECK_THAT(msg, Contains("node n19: status.allocatable.cpu"));
  CHECK_THAT(msg, !Contains("node n20:"));
  CHECK_THAT(msg, Contains("; and 5 more"));
}

TEST_CASE("a pod bound to an unknown node is refused") {
  std::string msg = DecodeError({ListOf({NodeJson("n1"), PodJson("p", R"({"nodeName": "n9"})")})});
  CHECK_THAT(msg, Contains(R"(pod default/p: spec.nodeName: "n9": no such node)"));
}

TEST_CASE("duplicate names are refused") {
  std::string msg = DecodeError({ListOf({NodeJson("n1"), NodeJson("n1")})});
  CHECK_THAT(msg, Contains("node n1: listed twice"));
  msg = DecodeError({ListOf({PodJson("p", "{}"), PodJson("p", "{}")})});
  CHECK_THAT(msg, Contains("pod default/p: listed twice"));
  std::string pdb =
      R"({"kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "d"}})";
  msg = DecodeError({ListOf({pdb, pdb})});
  CHECK_THAT(msg, Contains("poddisruptionbudget d/b: listed twice"));
}

std::string PdbWith(const std::string& expression) {
  return R"({"kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "d"},
      "spec": {"selector": {"matchExpressions": [)" +
         expression + "]}}}";
}

TEST_CASE("a PDB selector with an invalid operator or values is refused") {
  CHECK_THAT(
      DecodeError({ListOf({PdbWith(R"({"key": "app", "operator": "Matches", "values": ["x"]})")})}),
      Contains(
          R"(poddisruptionbudget d/b: spec.selector.matchExpressions[0]: operator: "Matches" is not In)"));
  CHECK_THAT(DecodeError({ListOf({PdbWith(R"({"key": "n", "operator": "Gt", "values": ["1"]})")})}),
             Contains(R"(operator: "Gt" is not In, NotIn, Exists or DoesNotExist)"));
  CHECK_THAT(DecodeError({ListOf({PdbWith(R"({"key": "app", "operator": "In"})")})}),
             Contains("values: In needs at least one value"));
  CHECK_THAT(
      DecodeError({ListOf({PdbWith(R"({"key": "app", "operator": "Exists", "values": ["x"]})")})}),
      Contains("values: Exists takes no values"));
}

TEST_CASE("a node affinity term with an invalid operator is refused") {
  std::string spec =
      R"({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [{"key": "c", "operator": "Gt", "values": ["1", "2"]}]}]}}}})";
  CHECK_THAT(DecodeError({ListOf({PodJson("p", spec)})}),
             Contains("pod default/p: spec.affinity.nodeAffinity.requiredDuringScheduling"
                      "IgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]: values: Gt "
                      "takes exactly one value"));
}

TEST_CASE("Validate checks a snapshot built by hand") {
  ClusterSnapshot s;
  DrainPod p;
  p.namespace_ = "ns";
  p.name = "p";
  p.node_name = "gone";
  s.pods.push_back(p);
  s.Reindex();
  Status st = Validate(s);
  CHECK_THAT(st.message(), Contains(R"(pod ns/p: spec.nodeName: "gone": no such node)"));
  s.pods[0].node_name.clear();
  s.Reindex();
  CHECK(Validate(s).ok());
}

// `kubectl get all -A -o json` with the nodes: ReplicaSets give the replica-count rule its
// counts; services, deployments and the other workload kinds are read past.
TEST_CASE("replica sets are read for the replica-count rule and other workload kinds skipped") {
  const ClusterSnapshot s = MustDecode({ListOf({
      NodeJson("n1"),
      R"({"kind": "ReplicaSet", "apiVersion": "apps/v1", "metadata": {"name": "web-5d4", "namespace": "shop"}, "spec": {"replicas": 3}})",
      R"({"kind": "ReplicationController", "apiVersion": "v1", "metadata": {"name": "legacy", "namespace": "shop"}, "spec": {}})",
      R"({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "web", "namespace": "shop"}})",
      R"({"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "web", "namespace": "shop"}})",
  })});
  CHECK(s.controller_replicas.at("shop/ReplicaSet/web-5d4") == 3);
  CHECK(s.controller_replicas.at("shop/ReplicationController/legacy") == 1);  // the default
  CHECK(s.nodes.size() == 1);
  CHECK_THAT(
      DecodeError({ListOf(
          {R"({"kind": "ReplicaSet", "metadata": {"name": "r", "namespace": "a"}, "spec": {"replicas": -2}})"})}),
      Contains("ReplicaSet a/r: spec.replicas: -2 is negative"));
}

TEST_CASE("live mode leaves out the pods of a node that is gone") {
  const std::string pod =
      R"({"kind": "Pod", "metadata": {"name": "orphan", "namespace": "default"}, "spec": {"nodeName": "deleted-node"}})";
  CHECK_THAT(DecodeError({ListOf({NodeJson("n1"), pod})}),
             Contains("spec.nodeName: \"deleted-node\": no such node"));
  DecodeOptions live;
  live.drop_pods_of_missing_nodes = true;
  const ClusterSnapshot s = MustDecode({ListOf({NodeJson("n1"), pod})}, live);
  CHECK(s.pods.empty());
  CHECK(s.nodes.size() == 1);
}

}  // namespace
}  // namespace qrm::cluster::drain
