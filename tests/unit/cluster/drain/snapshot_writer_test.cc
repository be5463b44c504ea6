// The snapshot writer: what it writes reads back through the decoder with every field equal,
// for the kubectl fixtures and for hand-built objects with the cases the fixtures lack.
#include "cluster/drain/snapshot_writer.h"

#include <catch2/catch.hpp>

#include "cluster/drain/snapshot_json.h"
#include "tests/unit/cluster/drain/fixtures.h"

namespace qrm::cluster::drain {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

void CheckResources(const Resources& a, const Resources& b) {
  CHECK(a.cpu_milli == b.cpu_milli);
  CHECK(a.memory_bytes == b.memory_bytes);
  CHECK(a.extended == b.extended);
}

void CheckRequirements(const std::vector<SelectorRequirement>& a,
                       const std::vector<SelectorRequirement>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].key == b[i].key);
    CHECK(a[i].op == b[i].op);
    CHECK(a[i].op_text == b[i].op_text);
    CHECK(a[i].values == b[i].values);
  }
}

void CheckNode(const DrainNode& a, const DrainNode& b) {
  INFO("node " << a.name);
  CHECK(a.name == b.name);
  CHECK(a.labels == b.labels);
  CHECK(a.annotations == b.annotations);
  REQUIRE(a.taints.size() == b.taints.size());
  for (size_t i = 0; i < a.taints.size(); ++i) {
    CHECK(a.taints[i].key == b.taints[i].key);
    CHECK(a.taints[i].value == b.taints[i].value);
    CHECK(a.taints[i].effect == b.taints[i].effect);
  }
  CHECK(a.unschedulable == b.unschedulable);
  CheckResources(a.allocatable, b.allocatable);
  CHECK(a.allocatable_pods == b.allocatable_pods);
  CHECK(a.node_group == b.node_group);
}

void CheckContainers(const std::vector<ContainerRequests>& a,
                     const std::vector<ContainerRequests>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].name == b[i].name);
    CheckResources(a[i].requests, b[i].requests);
  }
}

void CheckPodSpec(const DrainPod& a, const DrainPod& b) {
  CHECK(a.node_name == b.node_name);
  CHECK(a.priority == b.priority);
  CHECK(a.grace_period_seconds == b.grace_period_seconds);
  CheckResources(a.requests, b.requests);
  CheckContainers(a.init_containers, b.init_containers);
  CheckContainers(a.containers, b.containers);
  REQUIRE(a.volumes.size() == b.volumes.size());
  for (size_t i = 0; i < a.volumes.size(); ++i) {
    CHECK(a.volumes[i].name == b.volumes[i].name);
    CHECK(a.volumes[i].kind == b.volumes[i].kind);
    CHECK(a.volumes[i].medium == b.volumes[i].medium);
    CHECK(a.volumes[i].claim == b.volumes[i].claim);
    CHECK(a.volumes[i].disk == b.volumes[i].disk);
  }
  CHECK(a.node_selector == b.node_selector);
  REQUIRE(a.tolerations.size() == b.tolerations.size());
  for (size_t i = 0; i < a.tolerations.size(); ++i) {
    CHECK(a.tolerations[i].key == b.tolerations[i].key);
    CHECK(a.tolerations[i].op == b.tolerations[i].op);
    CHECK(a.tolerations[i].value == b.tolerations[i].value);
    CHECK(a.tolerations[i].effect == b.tolerations[i].effect);
  }
  REQUIRE(a.required_affinity.size() == b.required_affinity.size());
  for (size_t i = 0; i < a.required_affinity.size(); ++i) {
    CheckRequirements(a.required_affinity[i].match_expressions,
                      b.required_affinity[i].match_expressions);
  }
  CHECK(a.pod_affinity == b.pod_affinity);
  CHECK(a.pod_anti_affinity == b.pod_anti_affinity);
  CHECK(a.spread == b.spread);
}

void CheckPod(const DrainPod& a, const DrainPod& b) {
  INFO("pod " << a.Key());
  CHECK(a.namespace_ == b.namespace_);
  CHECK(a.name == b.name);
  CHECK(a.uid == b.uid);
  CHECK(a.labels == b.labels);
  CHECK(a.annotations == b.annotations);
  REQUIRE(a.owners.size() == b.owners.size());
  for (size_t i = 0; i < a.owners.size(); ++i) {
    CHECK(a.owners[i].kind == b.owners[i].kind);
    CHECK(a.owners[i].name == b.owners[i].name);
    CHECK(a.owners[i].controller == b.owners[i].controller);
  }
  CHECK(a.phase == b.phase);
  CHECK(a.creation_time == b.creation_time);
  CHECK(a.deletion_time == b.deletion_time);
  CheckPodSpec(a, b);
  CHECK(a.is_mirror == b.is_mirror);
  CHECK(a.qos_level == b.qos_level);
  CHECK(a.numa_binding == b.numa_binding);
  CHECK(a.numa_exclusive == b.numa_exclusive);
}

void CheckPdb(const DrainPdb& a, const DrainPdb& b) {
  INFO("pdb " << a.Key());
  CHECK(a.namespace_ == b.namespace_);
  CHECK(a.name == b.name);
  REQUIRE(a.selector.has_value() == b.selector.has_value());
  if (a.selector) {
    CHECK(a.selector->match_labels == b.selector->match_labels);
    CheckRequirements(a.selector->match_expressions, b.selector->match_expressions);
  }
  CHECK(a.disruptions_allowed == b.disruptions_allowed);
}

void CheckSnapshot(const ClusterSnapshot& a, const ClusterSnapshot& b) {
  REQUIRE(a.nodes.size() == b.nodes.size());
  REQUIRE(a.pods.size() == b.pods.size());
  REQUIRE(a.pdbs.size() == b.pdbs.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) CheckNode(a.nodes[i], b.nodes[i]);
  for (size_t i = 0; i < a.pods.size(); ++i) CheckPod(a.pods[i], b.pods[i]);
  for (size_t i = 0; i < a.pdbs.size(); ++i) CheckPdb(a.pdbs[i], b.pdbs[i]);
  CHECK(a.namespaces == b.namespaces);
  CHECK(a.claims == b.claims);
  CHECK(a.volumes == b.volumes);
  CHECK(a.storage_classes == b.storage_classes);
  CHECK(a.csi_nodes == b.csi_nodes);
  if (!a.claims.empty()) CHECK(a.claims_listed == b.claims_listed);
  if (!a.volumes.empty()) CHECK(a.volumes_listed == b.volumes_listed);
  CHECK(a.controller_replicas == b.controller_replicas);
}

// Written, read back with the same options, and compared field by field.
ClusterSnapshot RoundTrip(const ClusterSnapshot& s, const DecodeOptions& options = {}) {
  const std::string json = WriteSnapshotJson(s);
  INFO(json);
  ClusterSnapshot back = MustDecode({{"written.json", json}}, options);
  CheckSnapshot(s, back);
  return back;
}

SelectorRequirement Req(std::string key, SelectorOp op, std::string op_text,
                        std::vector<std::string> values = {}) {
  return {std::move(key), op, std::move(op_text), std::move(values)};
}

// Pod affinity terms with and without selectors and namespaces, spread constraints with and
// without their optional fields.
void AddInterPodFields(DrainPod& pod) {
  PodAffinityTerm cache;
  cache.selector = LabelSelector{{{"app", "cache"}}, {Req("tier", SelectorOp::kIn, "In", {"hot"})}};
  cache.namespaces = {"cache", "ns"};
  cache.topology_key = "zone";
  PodAffinityTerm anyone;
  anyone.namespace_selector = LabelSelector{};
  anyone.topology_key = "kubernetes.io/hostname";
  PodAffinityTerm team;
  team.selector = LabelSelector{};
  team.namespace_selector = LabelSelector{{{"team", "a"}}, {}};
  team.topology_key = "rack";
  pod.pod_affinity = {cache};
  pod.pod_anti_affinity = {anyone, team};
  TopologySpreadConstraint full;
  full.max_skew = 2;
  full.topology_key = "zone";
  full.when_unsatisfiable = "DoNotSchedule";
  full.selector = LabelSelector{{{"app", "app"}}, {}};
  full.min_domains = 3;
  full.honor_node_affinity = false;
  full.node_affinity_policy_text = "Ignore";
  full.honor_node_taints = true;
  full.node_taints_policy_text = "Honor";
  full.match_label_keys = {"pod-template-hash"};
  TopologySpreadConstraint bare;
  bare.max_skew = 1;
  bare.topology_key = "kubernetes.io/hostname";
  bare.when_unsatisfiable = "ScheduleAnyway";
  pod.spread = {full, bare};
}

// What the fixtures lack: every volume kind, an absent and an empty PDB selector, a request
// made only of overhead, an extended resource at 0, a terminating pod, Gt and Lt.
ClusterSnapshot HandBuilt() {
  ClusterSnapshot s;
  DrainNode node;
  node.name = "worker-1";
  node.labels = {{"group", "g1"}, {"zone", "z\"1"}};
  node.taints = {{"k", "", "NoExecute"}, {"dedicated", "db", "NoSchedule"}};
  node.unschedulable = true;
  node.allocatable = {63500, 250 * kGi, {{"hugepages-2Mi", 0}, {"qrm.io/nic", 4}}};
  node.allocatable_pods = 110;
  node.node_group = "g1";
  s.nodes.push_back(node);

  DrainPod pod;
  pod.namespace_ = "ns";
  pod.name = "app-1";
  pod.uid = "uid-1";
  pod.node_name = "worker-1";
  pod.labels = {{"app", "app"}};
  pod.annotations = {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
                     {"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding":"true"})"}};
  pod.qos_level = "dedicated_cores";
  pod.numa_binding = true;
  pod.owners = {{"ReplicaSet", "app-5c", true}, {"Thing", "other", false}};
  pod.phase = "Running";
  pod.priority = -5;
  pod.creation_time = 1'790'000'000;
  pod.deletion_time = 1'790'000'600;
  pod.grace_period_seconds = 0;
  pod.init_containers = {{"init", {500, kGi, {}}}};
  pod.containers = {{"main", {4000, 8 * kGi, {{"qrm.io/nic", 1}}}}, {"side", {0, 0, {}}}};
  // 200m and 64Mi of overhead, and a resource only the overhead names (at 0).
  pod.requests = {4200, 8 * kGi + (64 << 20), {{"qrm.io/nic", 1}, {"example.com/x", 0}}};
  pod.volumes = {{"cache", VolumeKind::kEmptyDir, "", ""},
                 {"shm", VolumeKind::kEmptyDir, "Memory", ""},
                 {"host", VolumeKind::kHostPath, "", ""},
                 {"data", VolumeKind::kPersistentVolumeClaim, "", "data-1"},
                 {"scratch", VolumeKind::kEphemeral, "", ""},
                 {"disk", VolumeKind::kInTreeDisk, "", "", {"kubernetes.io/cinder", "v-9", true}},
                 {"token", VolumeKind::kOther, "", ""}};
  pod.node_selector = {{"kubernetes.io/os", "linux"}};
  pod.tolerations = {{"dedicated", "Equal", "db", "NoSchedule"}, {"", "Exists", "", ""}};
  pod.required_affinity = {
      {{Req("cores", SelectorOp::kGt, "Gt", {"8"}), Req("mem", SelectorOp::kLt, "Lt", {"9"})}},
      {{Req("zone", SelectorOp::kNotIn, "NotIn", {"a", "b"})}}};
  AddInterPodFields(pod);
  s.pods.push_back(pod);

  DrainPod bare;  // no containers: the whole request is overhead
  bare.namespace_ = "ns";
  bare.name = "bare";
  bare.requests = {250, 1 << 20, {}};
  s.pods.push_back(bare);

  DrainPdb none{"ns", "no-selector", std::nullopt, 0};
  DrainPdb all{"ns", "all", LabelSelector{}, 3};
  DrainPdb some{"ns", "some", LabelSelector{{{"app", "app"}}, {}}, 1};
  some.selector->match_expressions = {Req("tier", SelectorOp::kIn, "In", {"web"}),
                                      Req("gone", SelectorOp::kDoesNotExist, "DoesNotExist")};
  s.pdbs = {none, all, some};
  s.namespaces = {{"ns", {{"team", "a"}}}, {"cache", {}}};
  s.claims["ns/data-1"] = {"ns", "data-1", "pv-1", ""};
  s.claims["ns/pending"] = {"ns", "pending", "", "fast"};
  s.volumes["pv-1"] = {"pv-1",
                       {{"topology.kubernetes.io/zone", "z1"}},
                       {{{Req("kubernetes.io/hostname", SelectorOp::kIn, "In", {"worker-1"})}}},
                       {"ebs.csi.aws.com", "vol-1", false}};
  s.volumes["pv-2"] = {"pv-2", {}, {}, {}};
  s.volumes["pv-3"] = {"pv-3", {}, {}, {"kubernetes.io/azure-disk", "/subs/x/disk-3", true}};
  s.storage_classes["fast"] = {"fast",
                               "ebs.csi.aws.com",
                               "WaitForFirstConsumer",
                               {{{Req("zone", SelectorOp::kIn, "In", {"z1", "z2"}),
                                  Req("rack", SelectorOp::kIn, "In", {"r"})}},
                                {{Req("zone", SelectorOp::kIn, "In", {"z3"})}}}};
  s.storage_classes["slow"] = {"slow", "kubernetes.io/no-provisioner", "Immediate", {}};
  s.csi_nodes["worker-1"] = {"worker-1", {{"ebs.csi.aws.com", 25}, {"efs.csi.aws.com", {}}}};
  s.csi_nodes["worker-2"] = {"worker-2", {}};
  s.claims_listed = true;
  s.volumes_listed = true;
  s.Reindex();
  return s;
}

TEST_CASE("the kubectl fixtures read back field for field after writing") {
  DecodeOptions options;
  options.node_group_label = "pool";
  const ClusterSnapshot s = MustDecode(
      {Fixture("nodes.json"), Fixture("pods.json"), Fixture("pdbs.json"), Fixture("mixed.json")},
      options);
  REQUIRE(s.nodes.size() == 3);
  const ClusterSnapshot back = RoundTrip(s, options);
  CHECK(back.nodes[0].node_group == std::optional<std::string>("numa-2"));
  // The fixture's overhead comes back as the part of the request the containers lack.
  CHECK(back.pods[0].requests.cpu_milli == 4100);
}

TEST_CASE("hand-built objects read back field for field after writing") {
  const ClusterSnapshot s = HandBuilt();
  DecodeOptions options;
  options.node_group_label = "group";
  const ClusterSnapshot back = RoundTrip(s, options);
  CHECK_FALSE(back.pdbs[0].selector.has_value());
  CHECK(back.pdbs[1].selector.has_value());
  CHECK(back.pods[0].deletion_time == 1'790'000'600);
}

TEST_CASE("a node group is written only as the labels hold it") {
  ClusterSnapshot s = HandBuilt();
  s.nodes[0].labels.erase("group");
  const std::string json = WriteSnapshotJson(s);
  DecodeOptions options;
  options.node_group_label = "group";
  const ClusterSnapshot back = MustDecode({{"written.json", json}}, options);
  CHECK_FALSE(back.nodes[0].node_group.has_value());
}

TEST_CASE("an absent PDB selector is not written and an empty one is") {
  const std::string json = WriteSnapshotJson(HandBuilt());
  CHECK(json.find(R"("name":"no-selector","namespace":"ns"},"spec":{})") != std::string::npos);
  CHECK(json.find(R"("name":"all","namespace":"ns"},"spec":{"selector":{}})") != std::string::npos);
}

TEST_CASE("quantities are written as plain integers") {
  const std::string json = WriteSnapshotJson(HandBuilt());
  CHECK(json.find(R"("allocatable":{"cpu":"63500m","memory":"268435456000","pods":"110",)") !=
        std::string::npos);
  CHECK(json.find(R"("overhead":{"cpu":"200m","memory":"67108864","example.com/x":"0"})") !=
        std::string::npos);
}

TEST_CASE("one pod written alone reads back as a list of one") {
  const ClusterSnapshot s = HandBuilt();
  const std::string json = WritePodJson(s.pods[0]);
  CHECK(json.rfind(R"({"apiVersion":"v1","kind":"Pod",)", 0) == 0);
  ClusterSnapshot with_node;
  with_node.nodes = s.nodes;
  with_node.namespaces = s.namespaces;  // its anti-affinity selects namespaces by label
  ClusterSnapshot back = MustDecode({{"nodes.json", WriteSnapshotJson(with_node)}, {"pod", json}});
  REQUIRE(back.pods.size() == 1);
  CheckPod(s.pods[0], back.pods[0]);
}

TEST_CASE("times beyond RFC 3339 years are written as the nearest that reads back") {
  ClusterSnapshot s = HandBuilt();
  s.pods[0].creation_time = -62'167'219'200 - 3600;  // before 0000-01-01T00:00:00Z
  s.pods[0].deletion_time = 253'402'300'799 + 3600;  // after 9999-12-31T23:59:59Z
  const std::string json = WriteSnapshotJson(s);
  CHECK(json.find(R"("creationTimestamp":"0000-01-01T00:00:00Z")") != std::string::npos);
  CHECK(json.find(R"("deletionTimestamp":"9999-12-31T23:59:59Z")") != std::string::npos);
  const ClusterSnapshot back = MustDecode({{"written.json", json}});
  CHECK(back.pods[0].creation_time == -62'167'219'200);
  CHECK(back.pods[0].deletion_time == 253'402'300'799);
}

}  // namespace
}  // namespace qrm::cluster::drain
