// Cluster Autoscaler's drainability rules, one by one and in order, and node eligibility.
#include "cluster/drain/drainability.h"

#include <catch2/catch.hpp>

#include "tests/unit/cluster/drain/fixtures.h"

namespace qrm::cluster::drain {
namespace {

constexpr int64_t kNow = 1'800'000'000;

// A running pod of a ReplicaSet on node n1: drainable unless a test changes it.
DrainPod ReplicatedPod(const std::string& name, const std::string& ns = "default") {
  DrainPod p;
  p.namespace_ = ns;
  p.name = name;
  p.node_name = "n1";
  p.phase = "Running";
  p.labels["app"] = name;
  p.owners.push_back({"ReplicaSet", name + "-rs", true});
  p.requests.cpu_milli = 500;
  p.requests.memory_bytes = 1LL << 30;
  return p;
}

DrainNode Node(const std::string& name) {
  DrainNode n;
  n.name = name;
  n.allocatable.cpu_milli = 4000;
  n.allocatable.memory_bytes = 8LL << 30;
  n.allocatable_pods = 110;
  return n;
}

ClusterSnapshot With(std::vector<DrainPod> pods, std::vector<DrainPdb> pdbs = {}) {
  ClusterSnapshot s;
  s.nodes.push_back(Node("n1"));
  s.pods = std::move(pods);
  s.pdbs = std::move(pdbs);
  s.Reindex();
  return s;
}

PodDrainability Eval(const DrainPod& pod, const DrainOptions& options = {},
                     std::vector<DrainPdb> pdbs = {}) {
  ClusterSnapshot s = With({pod}, std::move(pdbs));
  return EvaluatePod(s, s.pods[0], options, kNow);
}

DrainPdb Pdb(const std::string& app, int64_t allowed, const std::string& ns = "default") {
  DrainPdb b;
  b.namespace_ = ns;
  b.name = app + "-pdb";
  b.selector = LabelSelector{{{"app", app}}, {}};
  b.disruptions_allowed = allowed;
  return b;
}

TEST_CASE("a replicated running pod is drainable by no rule") {
  PodDrainability d = Eval(ReplicatedPod("web"));
  CHECK(d.outcome == DrainOutcome::kDrainable);
  CHECK(d.rule == DrainRule::kNone);
}

TEST_CASE("mirror pods are skipped before every other rule") {
  DrainPod p = ReplicatedPod("etcd", "kube-system");
  p.is_mirror = true;
  p.annotations[std::string(kSafeToEvictAnnotation)] = "false";
  PodDrainability d = Eval(p);
  CHECK(d.outcome == DrainOutcome::kSkip);
  CHECK(d.rule == DrainRule::kMirror);
}

TEST_CASE("pods terminating past grace plus 30 s are skipped and younger ones are not") {
  DrainPod p = ReplicatedPod("web");
  p.owners.clear();  // would block as not replicated
  p.grace_period_seconds = 60;
  p.deletion_time = kNow - 91;
  PodDrainability d = Eval(p);
  CHECK(d.outcome == DrainOutcome::kSkip);
  CHECK(d.rule == DrainRule::kLongTerminating);
  p.deletion_time = kNow - 90;
  CHECK(Eval(p).rule == DrainRule::kReplicated);
  p.grace_period_seconds.reset();  // 30 s by default
  p.deletion_time = kNow - 61;
  CHECK(Eval(p).rule == DrainRule::kLongTerminating);
}

TEST_CASE("the replica count rule needs controller replicas like CA needs listers") {
  DrainPod p = ReplicatedPod("web");
  DrainOptions options;
  options.min_replica_count = 3;
  CHECK(Eval(p, options).rule == DrainRule::kNone);
}

TEST_CASE("the replica count rule blocks missing or small ReplicaSets with CA's texts") {
  DrainPod p = ReplicatedPod("web");
  DrainOptions options;  // --min-replica-count 0: a missing controller still blocks
  ClusterSnapshot s = With({p});
  s.controller_replicas["default/ReplicaSet/other-rs"] = 5;
  PodDrainability d = EvaluatePod(s, s.pods[0], options, kNow);
  CHECK(d.outcome == DrainOutcome::kBlock);
  CHECK(d.rule == DrainRule::kReplicaCount);
  CHECK(d.blocking_reason == BlockingReason::kControllerNotFound);
  CHECK(d.reason ==
        "replication controller for default/web is not available, err: "
        "replicaset.apps \"web-rs\" not found");
  s.controller_replicas["default/ReplicaSet/web-rs"] = 2;
  CHECK(EvaluatePod(s, s.pods[0], options, kNow).rule == DrainRule::kNone);
  options.min_replica_count = 3;
  d = EvaluatePod(s, s.pods[0], options, kNow);
  CHECK(d.rule == DrainRule::kReplicaCount);
  CHECK(d.blocking_reason == BlockingReason::kMinReplicasReached);
  CHECK(d.reason == "replication controller for default/web has too few replicas spec: 2 min: 3");
  s.controller_replicas["default/ReplicaSet/web-rs"] = 3;
  CHECK(EvaluatePod(s, s.pods[0], options, kNow).rule == DrainRule::kNone);
  s.controller_replicas["default/ReplicaSet/web-rs"] = 2;
  options.skip_nodes_with_custom_controller_pods = false;  // drops the rule (rules.go)
  CHECK(EvaluatePod(s, s.pods[0], options, kNow).rule == DrainRule::kNone);
}

TEST_CASE("the replica count rule checks ReplicationControllers and leaves other kinds") {
  DrainPod p = ReplicatedPod("web");
  p.owners = {{"ReplicationController", "web-rc", true}};
  ClusterSnapshot s = With({p});
  s.controller_replicas["default/ReplicaSet/other-rs"] = 5;
  PodDrainability d = EvaluatePod(s, s.pods[0], {}, kNow);
  CHECK(d.blocking_reason == BlockingReason::kControllerNotFound);
  CHECK(d.reason ==
        "replication controller for default/web is not available, err: "
        "replicationcontroller \"web-rc\" not found");
  for (const char* kind : {"StatefulSet", "Job"}) {
    s.pods[0].owners = {{kind, "x", true}};
    CHECK(EvaluatePod(s, s.pods[0], {}, kNow).rule == DrainRule::kNone);
  }
}

TEST_CASE("daemonset pods are skipped by owner or by CA's annotation") {
  DrainPod p = ReplicatedPod("agent", "kube-system");
  p.owners = {{"DaemonSet", "agent", true}};
  PodDrainability d = Eval(p);
  CHECK(d.outcome == DrainOutcome::kSkip);
  CHECK(d.rule == DrainRule::kDaemonSet);
  p.owners.clear();
  p.annotations[std::string(kDaemonSetPodAnnotation)] = "true";
  CHECK(Eval(p).rule == DrainRule::kDaemonSet);
}

TEST_CASE("safe-to-evict true makes a pod drainable past the blocking rules") {
  DrainPod p = ReplicatedPod("cache", "kube-system");
  p.owners.clear();
  p.volumes.push_back({"scratch", VolumeKind::kHostPath, "", ""});
  p.annotations[std::string(kSafeToEvictAnnotation)] = "true";
  PodDrainability d = Eval(p, {}, {Pdb("cache", 0, "kube-system")});
  CHECK(d.outcome == DrainOutcome::kDrainable);
  CHECK(d.rule == DrainRule::kSafeToEvict);
  CHECK(d.reason.empty());
}

TEST_CASE("terminal pods are skipped") {
  for (const char* phase : {"Succeeded", "Failed"}) {
    DrainPod p = ReplicatedPod("job");
    p.owners.clear();
    p.phase = phase;
    PodDrainability d = Eval(p);
    CHECK(d.outcome == DrainOutcome::kSkip);
    CHECK(d.rule == DrainRule::kTerminal);
  }
}

TEST_CASE("on-completion pods are awaited not moved") {
  DrainPod p = ReplicatedPod("train");
  p.annotations[std::string(kSafeToEvictAnnotation)] = "on-completion";
  PodDrainability d = Eval(p);
  CHECK(d.outcome == DrainOutcome::kWait);
  CHECK(d.rule == DrainRule::kOnCompletion);
  ClusterSnapshot s = With({p, ReplicatedPod("web")});
  NodeDrainability n = EvaluateNode(s, s.nodes[0], {}, kNow);
  CHECK(n.drainable);
  CHECK(n.pods_awaited == std::vector<size_t>{0});
  CHECK(n.pods_to_move == std::vector<size_t>{1});
}

TEST_CASE("unreplicated pods block with CA's reason unless told not to") {
  DrainPod p = ReplicatedPod("lonely");
  p.owners.clear();
  PodDrainability d = Eval(p);
  CHECK(d.outcome == DrainOutcome::kBlock);
  CHECK(d.rule == DrainRule::kReplicated);
  CHECK(d.blocking_reason == BlockingReason::kNotReplicated);
  CHECK(d.reason == "default/lonely is not replicated");
  DrainOptions options;
  options.block_unreplicated_pods = false;
  CHECK(Eval(p, options).outcome == DrainOutcome::kDrainable);
  p.owners = {{"ReplicaSet", "rs", false}};  // an owner but not the controller
  CHECK(Eval(p).rule == DrainRule::kReplicated);
}

TEST_CASE("custom controllers count as replicated only when custom controller pods are allowed") {
  DrainPod p = ReplicatedPod("flink");
  p.owners = {{"FlinkDeployment", "f", true}};
  CHECK(Eval(p).rule == DrainRule::kReplicated);
  DrainOptions options;
  options.skip_nodes_with_custom_controller_pods = false;
  CHECK(Eval(p, options).outcome == DrainOutcome::kDrainable);
  for (const char* kind : {"ReplicationController", "StatefulSet", "Job"}) {
    p.owners = {{kind, "x", true}};
    CHECK(Eval(p).outcome == DrainOutcome::kDrainable);
  }
}

TEST_CASE("kube-system pods without a PDB block") {
  DrainPod p = ReplicatedPod("coredns", "kube-system");
  PodDrainability d = Eval(p);
  CHECK(d.outcome == DrainOutcome::kBlock);
  CHECK(d.rule == DrainRule::kSystem);
  CHECK(d.blocking_reason == BlockingReason::kUnmovableKubeSystemPod);
  CHECK(d.reason ==
        "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: coredns");
  CHECK(Eval(p, {}, {Pdb("coredns", 1, "kube-system")}).outcome == DrainOutcome::kDrainable);
  DrainOptions options;
  options.skip_nodes_with_system_pods = false;
  CHECK(Eval(p, options).outcome == DrainOutcome::kDrainable);
}

TEST_CASE("kube-system pods older than the disruption timeout are drainable") {
  DrainPod p = ReplicatedPod("coredns", "kube-system");
  p.creation_time = kNow - 3600;  // --blocking-system-pod-distruption-timeout: 1h
  CHECK(Eval(p).outcome == DrainOutcome::kBlock);
  p.creation_time = kNow - 3601;
  PodDrainability d = Eval(p);
  CHECK(d.outcome == DrainOutcome::kDrainable);
  CHECK(d.rule == DrainRule::kSystem);
  DrainOptions options;
  options.bsp_disruption_timeout_seconds = 7200;
  CHECK(Eval(p, options).outcome == DrainOutcome::kBlock);
}

TEST_CASE("safe-to-evict false blocks") {
  DrainPod p = ReplicatedPod("db");
  p.annotations[std::string(kSafeToEvictAnnotation)] = "false";
  PodDrainability d = Eval(p);
  CHECK(d.outcome == DrainOutcome::kBlock);
  CHECK(d.rule == DrainRule::kNotSafeToEvict);
  CHECK(d.blocking_reason == BlockingReason::kNotSafeToEvictAnnotation);
  CHECK(d.reason == "pod annotated as not safe to evict present: db");
}

TEST_CASE("emptyDir on disk and hostPath block and memory or listed volumes do not") {
  DrainPod p = ReplicatedPod("web");
  p.volumes.push_back({"shm", VolumeKind::kEmptyDir, "Memory", ""});
  p.volumes.push_back({"data", VolumeKind::kPersistentVolumeClaim, "", "data"});
  CHECK(Eval(p).outcome == DrainOutcome::kDrainable);
  p.volumes.push_back({"cache", VolumeKind::kEmptyDir, "", ""});
  PodDrainability d = Eval(p);
  CHECK(d.outcome == DrainOutcome::kBlock);
  CHECK(d.rule == DrainRule::kLocalStorage);
  CHECK(d.blocking_reason == BlockingReason::kLocalStorageRequested);
  CHECK(d.reason == "pod with local storage present: web");
  p.annotations[std::string(kSafeToEvictLocalVolumesAnnotation)] = "logs,cache";
  CHECK(Eval(p).outcome == DrainOutcome::kDrainable);
  p.volumes.push_back({"logs2", VolumeKind::kHostPath, "", ""});
  CHECK(Eval(p).rule == DrainRule::kLocalStorage);
  DrainOptions options;
  options.skip_nodes_with_local_storage = false;
  CHECK(Eval(p, options).outcome == DrainOutcome::kDrainable);
}

TEST_CASE("a PDB without disruptions left blocks") {
  DrainPod p = ReplicatedPod("web");
  PodDrainability d = Eval(p, {}, {Pdb("web", 0)});
  CHECK(d.outcome == DrainOutcome::kBlock);
  CHECK(d.rule == DrainRule::kPdb);
  CHECK(d.blocking_reason == BlockingReason::kNotEnoughPdb);
  CHECK(d.reason == "not enough pod disruption budget to move default/web");
  CHECK(Eval(p, {}, {Pdb("web", 1)}).outcome == DrainOutcome::kDrainable);
  CHECK(Eval(p, {}, {Pdb("web", 0, "other")}).outcome == DrainOutcome::kDrainable);
}

TEST_CASE("rules run in CA's order") {
  // Unreplicated with local storage and a PDB at zero: replicated comes first.
  DrainPod p = ReplicatedPod("web");
  p.owners.clear();
  p.volumes.push_back({"cache", VolumeKind::kEmptyDir, "", ""});
  CHECK(Eval(p, {}, {Pdb("web", 0)}).rule == DrainRule::kReplicated);
  // Not safe to evict comes before local storage, which comes before the PDB.
  p = ReplicatedPod("web");
  p.volumes.push_back({"cache", VolumeKind::kEmptyDir, "", ""});
  CHECK(Eval(p, {}, {Pdb("web", 0)}).rule == DrainRule::kLocalStorage);
  p.annotations[std::string(kSafeToEvictAnnotation)] = "false";
  CHECK(Eval(p, {}, {Pdb("web", 0)}).rule == DrainRule::kNotSafeToEvict);
  // Terminal comes before replicated; daemonset before terminal.
  p = ReplicatedPod("job");
  p.owners.clear();
  p.phase = "Failed";
  CHECK(Eval(p).rule == DrainRule::kTerminal);
  p.owners = {{"DaemonSet", "d", true}};
  CHECK(Eval(p).rule == DrainRule::kDaemonSet);
  // On-completion comes after terminal and before replicated.
  p = ReplicatedPod("train");
  p.owners.clear();
  p.annotations[std::string(kSafeToEvictAnnotation)] = "on-completion";
  CHECK(Eval(p).rule == DrainRule::kOnCompletion);
  p.phase = "Succeeded";
  CHECK(Eval(p).rule == DrainRule::kTerminal);
  // Replica count comes before daemonset and safe-to-evict.
  p = ReplicatedPod("web");
  p.annotations[std::string(kSafeToEvictAnnotation)] = "true";
  ClusterSnapshot s = With({p});
  s.controller_replicas["default/ReplicaSet/other-rs"] = 5;
  CHECK(EvaluatePod(s, s.pods[0], {}, kNow).rule == DrainRule::kReplicaCount);
  // Long-terminating comes before replica count.
  s.pods[0].deletion_time = kNow - 61;
  CHECK(EvaluatePod(s, s.pods[0], {}, kNow).rule == DrainRule::kLongTerminating);
}

TEST_CASE("rule names are CA's and reasons are BlockingPodReason texts") {
  CHECK(DrainRuleName(DrainRule::kMirror) == "Mirror");
  CHECK(DrainRuleName(DrainRule::kLongTerminating) == "LongTerminating");
  CHECK(DrainRuleName(DrainRule::kReplicaCount) == "ReplicaCount");
  CHECK(DrainRuleName(DrainRule::kOnCompletion) == "OnCompletion");
  CHECK(DrainRuleName(DrainRule::kNotSafeToEvict) == "NotSafeToEvict");
  CHECK(DrainRuleName(DrainRule::kPdb) == "PDB");
  CHECK(DrainOutcomeName(DrainOutcome::kBlock) == "block");
  CHECK(DrainOutcomeName(DrainOutcome::kWait) == "wait");
  CHECK(BlockingReasonName(BlockingReason::kNoReason) == "NoReason");
  CHECK(BlockingReasonName(BlockingReason::kUnmovableKubeSystemPod) == "UnmovableKubeSystemPod");
  CHECK(BlockingReasonName(BlockingReason::kNotEnoughPdb) == "NotEnoughPdb");
  CHECK(BlockingReasonName(BlockingReason::kUnexpectedError) == "UnexpectedError");
}

TEST_CASE("the defaults are CA's flag defaults") {
  DrainOptions d;
  CHECK(d.skip_nodes_with_system_pods);
  CHECK(d.skip_nodes_with_local_storage);
  CHECK(d.skip_nodes_with_custom_controller_pods);
  CHECK(d.min_replica_count == 0);
  CHECK(d.bsp_disruption_timeout_seconds == 3600);
  CHECK(d.long_terminating_extra_seconds == 30);
  EligibilityOptions e;
  CHECK(e.utilization_threshold == 0.5);
  CHECK_FALSE(e.ignore_daemonsets_utilization);
  CHECK_FALSE(e.ignore_mirror_pods_utilization);
}

TEST_CASE("a node lists its pods to move and skip or names its first blocking pod") {
  DrainPod ds = ReplicatedPod("agent");
  ds.owners = {{"DaemonSet", "agent", true}};
  DrainPod elsewhere = ReplicatedPod("far");
  elsewhere.node_name = "n2";
  ClusterSnapshot s = With({ReplicatedPod("a"), ds, ReplicatedPod("b"), elsewhere});
  s.nodes.push_back(Node("n2"));
  s.Reindex();
  NodeDrainability n = EvaluateNode(s, s.nodes[0], {}, kNow);
  CHECK(n.node == "n1");
  CHECK(n.drainable);
  CHECK(n.pods_to_move == std::vector<size_t>{0, 2});
  CHECK(n.pods_skipped == std::vector<size_t>{1});
  s.pods[2].annotations[std::string(kSafeToEvictAnnotation)] = "false";
  n = EvaluateNode(s, s.nodes[0], {}, kNow);
  CHECK_FALSE(n.drainable);
  CHECK(n.blocking_pod == "default/b");
  CHECK(n.rule == DrainRule::kNotSafeToEvict);
  CHECK(n.blocking_reason == BlockingReason::kNotSafeToEvictAnnotation);
  CHECK(n.reason == "pod annotated as not safe to evict present: b");
  CHECK(n.pods_to_move.empty());
  NodeDrainability empty = EvaluateNode(s, Node("n3"), {}, kNow);
  CHECK(empty.drainable);
  CHECK(empty.pods_to_move.empty());
}

TEST_CASE("the fixture cluster's nodes are judged by the rules") {
  DecodeOptions options;
  options.node_group_label = "pool";
  ClusterSnapshot s =
      MustDecode({Fixture("nodes.json"), Fixture("pods.json"), Fixture("pdbs.json")}, options);
  NodeDrainability a = EvaluateNode(s, *s.FindNode("node-a"), {}, kNow);
  // web-1 has a disk emptyDir and a hostPath; etcd is a mirror pod.
  CHECK_FALSE(a.drainable);
  CHECK(a.rule == DrainRule::kLocalStorage);
  CHECK(a.blocking_pod == "default/web-1");
}

// --- eligibility -----------------------------------------------------------------------------

TEST_CASE("utilisation is max of cpu and memory requests over allocatable") {
  DrainPod p = ReplicatedPod("web");  // 500m of 4000m, 1Gi of 8Gi
  p.requests.memory_bytes = 3LL << 30;
  ClusterSnapshot s = With({p});
  NodeEligibility e = EvaluateEligibility(s, s.nodes[0], {}, kNow);
  CHECK(e.eligible);
  CHECK(e.utilization == Approx(0.375));
  s.pods[0].requests.memory_bytes = 4LL << 30;  // exactly the threshold: at or below it
  e = EvaluateEligibility(s, s.nodes[0], {}, kNow);
  CHECK(e.eligible);
  CHECK(e.utilization == Approx(0.5));
  s.pods[0].requests.memory_bytes = 5LL << 30;
  e = EvaluateEligibility(s, s.nodes[0], {}, kNow);
  CHECK_FALSE(e.eligible);
  CHECK(e.unremovable_reason == "NotUnderutilized");
  CHECK(e.reason ==
        "memory requested (62.5% of allocatable) is above the scale-down utilization threshold");
  s.pods[0].requests.cpu_milli = 3000;
  CHECK(EvaluateEligibility(s, s.nodes[0], {}, kNow).reason ==
        "cpu requested (75% of allocatable) is above the scale-down utilization threshold");
  s.pods[0].requests.cpu_milli = 500;
  EligibilityOptions options;
  options.utilization_threshold = 0.625;
  CHECK(EvaluateEligibility(s, s.nodes[0], options, kNow).eligible);
}

TEST_CASE("ignored daemonset or mirror pods come off allocatable") {
  DrainPod done = ReplicatedPod("done");
  done.phase = "Succeeded";
  done.requests.cpu_milli = 4000;
  DrainPod ds = ReplicatedPod("agent");
  ds.owners = {{"DaemonSet", "agent", true}};
  ds.requests.cpu_milli = 3000;
  // Terminal pods do not count; 3500m of 4000m.
  ClusterSnapshot s = With({done, ds, ReplicatedPod("web")});
  CHECK(EvaluateEligibility(s, s.nodes[0], {}, kNow).utilization == Approx(0.875));
  EligibilityOptions options;
  options.ignore_daemonsets_utilization = true;  // 500m of 1000m
  CHECK(EvaluateEligibility(s, s.nodes[0], options, kNow).utilization == Approx(0.5));
  s.pods[1].owners.clear();
  s.pods[1].is_mirror = true;
  CHECK(EvaluateEligibility(s, s.nodes[0], options, kNow).utilization == Approx(0.875));
  options = {};
  options.ignore_mirror_pods_utilization = true;
  CHECK(EvaluateEligibility(s, s.nodes[0], options, kNow).utilization == Approx(0.5));
}

TEST_CASE("long-terminating pods do not count towards utilisation") {
  DrainPod p = ReplicatedPod("web");
  p.requests.cpu_milli = 4000;
  p.deletion_time = kNow - 60;  // grace 30 s + 30 s: not yet
  ClusterSnapshot s = With({p});
  CHECK(EvaluateEligibility(s, s.nodes[0], {}, kNow).utilization == Approx(1.0));
  s.pods[0].deletion_time = kNow - 61;
  CHECK(EvaluateEligibility(s, s.nodes[0], {}, kNow).utilization == Approx(0.0));
}

TEST_CASE("the scale-down-disabled annotation makes a node ineligible") {
  ClusterSnapshot s = With({});
  s.nodes[0].annotations[std::string(kScaleDownDisabledAnnotation)] = "true";
  NodeEligibility e = EvaluateEligibility(s, s.nodes[0], {}, kNow);
  CHECK_FALSE(e.eligible);
  CHECK(e.unremovable_reason == "ScaleDownDisabledAnnotation");
  CHECK(e.reason == "the node is marked as no scale down");
  s.nodes[0].annotations[std::string(kScaleDownDisabledAnnotation)] = "false";
  CHECK(EvaluateEligibility(s, s.nodes[0], {}, kNow).eligible);
}

TEST_CASE("a node group at its minimum size keeps its nodes") {
  ClusterSnapshot s = With({});
  s.nodes.push_back(Node("n2"));
  for (DrainNode& n : s.nodes) n.node_group = "pool-a";
  s.Reindex();
  EligibilityOptions options;
  options.min_group_size["pool-a"] = 2;
  NodeEligibility e = EvaluateEligibility(s, s.nodes[0], options, kNow);
  CHECK_FALSE(e.eligible);
  CHECK(e.unremovable_reason == "NodeGroupMinSizeReached");
  CHECK(e.reason == "node group min size reached: node group pool-a has 2 nodes, min size 2");
  options.min_group_size["pool-a"] = 1;
  CHECK(EvaluateEligibility(s, s.nodes[0], options, kNow).eligible);
  options.min_group_size.clear();
  options.min_group_size["other"] = 5;
  CHECK(EvaluateEligibility(s, s.nodes[0], options, kNow).eligible);
}

TEST_CASE("a node without allocatable cpu or memory is not eligible") {
  ClusterSnapshot s = With({});
  s.nodes[0].allocatable.memory_bytes = 0;
  NodeEligibility e = EvaluateEligibility(s, s.nodes[0], {}, kNow);
  CHECK_FALSE(e.eligible);
  CHECK(e.unremovable_reason == "UnexpectedError");
  CHECK(e.reason == "memory is 0 at n1");
}

}  // namespace
}  // namespace qrm::cluster::drain
