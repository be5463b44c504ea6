// The CSI volume attach limits in the drain simulation (kube-scheduler's NodeVolumeLimits): the
// limit keys, where a node's limits come from, what of a pod counts against them on which node,
// the comparison, the simulation's bookkeeping, a plan that respects them, and their decoding.
#include "cluster/drain/volume_limits.h"

#include <catch2/catch.hpp>

#include "cluster/drain/planner.h"
#include "cluster/drain/simulation.h"
#include "tests/unit/cluster/drain/fixtures.h"
#include "tests/unit/cluster/drain/planner_builders.h"

namespace qrm::cluster::drain {
namespace {

using Catch::Matchers::Contains;

constexpr const char* kEbs = "ebs.csi.aws.com";
const std::string kEbsKey = "attachable-volumes-csi-ebs.csi.aws.com";

DrainPod WithVolume(const std::string& name, const std::string& node, Volume v) {
  DrainPod p = MakePod(name, node, 100, 0);
  p.volumes.push_back(std::move(v));
  return p;
}

Volume ClaimVolume(const std::string& claim) {
  return {"data", VolumeKind::kPersistentVolumeClaim, "", claim, {}};
}

// Nodes n1, n2 (no CSINode), n3; claims c<i> bound to CSI volumes pv-<i> (EBS handles vol-<i>),
// an in-tree EBS volume, an NFS one, a claim not bound yet of class gp3 and one without class.
ClusterSnapshot Cluster(std::vector<DrainPod> pods) {
  ClusterSnapshot s = MakeSnapshot(
      {MakeNode("n1", 16, 64), MakeNode("n2", 16, 64), MakeNode("n3", 16, 64)}, std::move(pods));
  s.claims_listed = s.volumes_listed = true;
  for (int i = 1; i <= 4; ++i) {
    const std::string n = std::to_string(i);
    s.claims["default/c" + n] = {"default", "c" + n, "pv-" + n, ""};
    s.volumes["pv-" + n] = {"pv-" + n, {}, {}, {kEbs, "vol-" + n, false}};
  }
  s.claims["default/legacy"] = {"default", "legacy", "pv-legacy", ""};
  s.volumes["pv-legacy"] = {"pv-legacy", {}, {}, {"kubernetes.io/aws-ebs", "vol-9", true}};
  s.claims["default/nfs"] = {"default", "nfs", "pv-nfs", ""};
  s.volumes["pv-nfs"] = {"pv-nfs", {}, {}, {}};
  s.claims["default/new"] = {"default", "new", "", "gp3"};
  s.claims["default/classless"] = {"default", "classless", "", ""};
  s.storage_classes["gp3"] = {"gp3", kEbs, "WaitForFirstConsumer", {}};
  s.csi_nodes["n1"] = {"n1", {{kEbs, 2}, {"efs.csi.aws.com", std::nullopt}}};
  s.csi_nodes["n3"] = {"n3", {{kEbs, 3}}};
  return s;
}

TEST_CASE("a driver's limit key is its allocatable name, hashed when too long") {
  CHECK(AttachLimitKey(kEbs) == kEbsKey);
  // 23 + 39 = 62 characters stay as they are; 63 and more are cut and hashed (SHA-1).
  CHECK(AttachLimitKey(std::string(39, 'a')) == "attachable-volumes-csi-" + std::string(39, 'a'));
  CHECK(AttachLimitKey(std::string(40, 'a')).size() == 23 + 23 + 16);
  CHECK(AttachLimitKey("very-long-csi-driver-name.storage.example.com") ==
        "attachable-volumes-csi-very-long-csi-driver-na07a2878efedcb14e");
}

TEST_CASE("a node's limits: its allocatable keys, overridden by its CSINode's counts") {
  ClusterSnapshot s = Cluster({});
  s.nodes[0].allocatable.extended[kEbsKey] = 25;
  s.nodes[0].allocatable.extended["attachable-volumes-csi-other.example.com"] = 7;
  s.nodes[0].allocatable.extended["example.com/widget"] = 4;
  s.nodes[1].allocatable.extended[kEbsKey] = 25;
  CHECK(AttachLimitsOf(s, s.nodes[0]) ==
        AttachLimits{{kEbsKey, 2}, {"attachable-volumes-csi-other.example.com", 7}});
  CHECK(AttachLimitsOf(s, s.nodes[1]) == AttachLimits{{kEbsKey, 25}});
  CHECK(AttachLimitsOf(s, s.nodes[2]) == AttachLimits{{kEbsKey, 3}});
  s.csi_nodes.clear();
  s.nodes.push_back(MakeNode("bare", 1, 1));
  CHECK(AttachLimitsOf(s, s.nodes.back()).empty());
}

TEST_CASE("what of a pod counts against a node's attach limits") {
  ClusterSnapshot s = Cluster({});
  const DrainNode &n1 = s.nodes[0], &n2 = s.nodes[1];
  auto ids = [&](const DrainPod& pod, const DrainNode& node) {
    return AttachedVolumesOf(s, pod, node);
  };
  // A claim bound to a CSI volume: its driver and handle, on any node.
  CHECK(ids(WithVolume("p", "", ClaimVolume("c1")), n2) ==
        AttachedVolumes{{kEbsKey, {"ebs.csi.aws.com/vol-1"}}});
  // An in-tree EBS volume counts as the driver it migrated to, only where a CSINode says
  // migration is on.
  CHECK(ids(WithVolume("p", "", ClaimVolume("legacy")), n1) ==
        AttachedVolumes{{kEbsKey, {"ebs.csi.aws.com/vol-9"}}});
  CHECK(ids(WithVolume("p", "", ClaimVolume("legacy")), n2).empty());
  const Volume inline_disk{
      "disk", VolumeKind::kInTreeDisk, "", "", {"kubernetes.io/aws-ebs", "vol-7", true}};
  CHECK(ids(WithVolume("p", "", inline_disk), n1) ==
        AttachedVolumes{{kEbsKey, {"ebs.csi.aws.com/vol-7"}}});
  CHECK(ids(WithVolume("p", "", inline_disk), n2).empty());
  // A claim not bound yet: one volume of its class's provisioner; none without a class, none
  // for a volume without a disk (NFS), none for a claim that does not exist.
  CHECK(ids(WithVolume("p", "", ClaimVolume("new")), n2) ==
        AttachedVolumes{{kEbsKey, {"ebs.csi.aws.com/(claim default/new)"}}});
  CHECK(ids(WithVolume("p", "", ClaimVolume("classless")), n1).empty());
  CHECK(ids(WithVolume("p", "", ClaimVolume("nfs")), n1).empty());
  CHECK(ids(WithVolume("p", "", ClaimVolume("gone")), n1).empty());
  // An ephemeral volume's claim is "<pod>-<volume>".
  s.claims["default/p-scratch"] = {"default", "p-scratch", "pv-2", ""};
  CHECK(ids(WithVolume("p", "", {"scratch", VolumeKind::kEphemeral, "", "", {}}), n2) ==
        AttachedVolumes{{kEbsKey, {"ebs.csi.aws.com/vol-2"}}});
  // Bound to a volume that is gone: what the class would provision.
  s.claims["default/lost"] = {"default", "lost", "pv-gone", "gp3"};
  CHECK(ids(WithVolume("p", "", ClaimVolume("lost")), n2) ==
        AttachedVolumes{{kEbsKey, {"ebs.csi.aws.com/(claim default/lost)"}}});
  // An in-tree provisioner migrates too; no-provisioner is counted against nothing.
  s.storage_classes["gp3"].provisioner = "kubernetes.io/aws-ebs";
  CHECK(ids(WithVolume("p", "", ClaimVolume("new")), n1).size() == 1);
  CHECK(ids(WithVolume("p", "", ClaimVolume("new")), n2).empty());
  s.storage_classes["gp3"].provisioner = "kubernetes.io/no-provisioner";
  CHECK(ids(WithVolume("p", "", ClaimVolume("new")), n1).empty());
  // Without claims and volumes in the input no claim counts; inline disks still do.
  s.volumes_listed = false;
  CHECK(ids(WithVolume("p", "", ClaimVolume("c1")), n1).empty());
  CHECK(ids(WithVolume("p", "", inline_disk), n1).size() == 1);
}

TEST_CASE("new volumes must fit under each limit; attached ones count once") {
  const AttachedVolumes attached{{"k", {"d/1", "d/2"}}};
  const AttachLimits limits{{"k", 3}};
  CHECK(WithinAttachLimits(attached, {{"k", {"d/3"}}}, limits));
  CHECK_FALSE(WithinAttachLimits(attached, {{"k", {"d/3", "d/4"}}}, limits));
  CHECK(WithinAttachLimits(attached, {{"k", {"d/1", "d/2", "d/3"}}}, limits));
  CHECK(WithinAttachLimits(attached, {{"other", {"d/3", "d/4"}}}, limits));  // no limit
  // A node already over its limit still takes a pod whose volumes are all there.
  CHECK(WithinAttachLimits(attached, {{"k", {"d/1"}}}, {{"k", 1}}));
  CHECK_FALSE(WithinAttachLimits(attached, {{"k", {"d/3"}}}, {{"k", 1}}));
  CHECK_FALSE(WithinAttachLimits({}, {{"k", {"d/1"}}}, {{"k", 0}}));
}

TEST_CASE("the simulation counts the volumes of the pods on a node and of the pods it places") {
  // n1 takes 2 EBS volumes and holds vol-1 (twice: two pods share it) and vol-2; a finished
  // pod's vol-3 no longer counts.
  DrainPod done = WithVolume("done", "n1", ClaimVolume("c3"));
  done.phase = "Succeeded";
  ClusterSnapshot s =
      Cluster({WithVolume("a", "n1", ClaimVolume("c1")), WithVolume("b", "n1", ClaimVolume("c1")),
               WithVolume("c", "n1", ClaimVolume("c2")), done});
  Simulation sim(s, {}, false);
  CHECK(sim.use(0).attached.at(kEbsKey).size() == 2);
  CHECK(sim.Fits(WithVolume("x", "", ClaimVolume("c3")), 0) == FitFailure::kVolumeLimits);
  CHECK(sim.Fits(WithVolume("x", "", ClaimVolume("c1")), 0) == FitFailure::kFits);
  CHECK(sim.Fits(WithVolume("x", "", ClaimVolume("c3")), 1) == FitFailure::kFits);  // no limit
  // n3 takes 3: two placed pods fill it, and a revert frees it again.
  const DrainPod p3 = WithVolume("p3", "", ClaimVolume("c3"));
  const DrainPod p4 = WithVolume("p4", "", ClaimVolume("c4"));
  const DrainPod p2 = WithVolume("p2", "", ClaimVolume("c2"));
  const DrainPod p1 = WithVolume("p1", "", ClaimVolume("c1"));
  std::optional<NumaPlacement> placement;
  sim.Fork();
  REQUIRE(sim.Place(p3, 2, &placement) == FitFailure::kFits);
  REQUIRE(sim.Place(p4, 2, &placement) == FitFailure::kFits);
  REQUIRE(sim.Place(p2, 2, &placement) == FitFailure::kFits);
  CHECK(sim.Fits(p1, 2) == FitFailure::kVolumeLimits);
  CHECK(sim.Fits(p3, 2) == FitFailure::kFits);  // already attached there
  sim.Revert();
  CHECK(sim.use(2).attached.empty());
  CHECK(sim.Fits(p1, 2) == FitFailure::kFits);
}

TEST_CASE("a drain moves volume pods only where their driver has room") {
  // Draining n2 (EBS volumes vol-3, vol-4) needs 2 free EBS slots: n1 has 1 of its 2 left, n3
  // (limit 3) all. n1 and n3 are too busy to be drained themselves.
  ClusterSnapshot s =
      Cluster({WithVolume("a", "n1", ClaimVolume("c1")), MakePod("busy-1", "n1", 9000, 8),
               MakePod("busy-3", "n3", 9000, 8), WithVolume("v3", "n2", ClaimVolume("c3")),
               WithVolume("v4", "n2", ClaimVolume("c4"))});
  StatusOr<Plan> plan = MakePlan(s, {}, PlannerOptions(), PlannerState());
  REQUIRE(plan.ok());
  REQUIRE(plan->candidates.size() == 1);
  CHECK(plan->candidates[0].node == "n2");
  REQUIRE(plan->candidates[0].moves.size() == 2);
  int to_n1 = 0;
  for (const PodMove& m : plan->candidates[0].moves) to_n1 += m.destination == "n1";
  CHECK(to_n1 <= 1);
  // With n3 full too, one of n2's volume pods has no home.
  s.csi_nodes["n3"].drivers[kEbs] = 0;
  plan = MakePlan(s, {}, PlannerOptions(), PlannerState());
  REQUIRE(plan.ok());
  CHECK(plan->candidates.empty());
  bool refused = false;
  for (const NotDrainable& n : plan->not_drainable) {
    if (n.node != "n2") continue;
    refused = true;
    CHECK(n.kind == NotDrainableKind::kNoPlaceForPod);
    CHECK_THAT(n.reason, Contains("volume attach limit"));
  }
  CHECK(refused);
}

constexpr const char* kStorage = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": "gp3"},
   "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
   "allowedTopologies": [{"matchLabelExpressions": [
     {"key": "topology.ebs.csi.aws.com/zone", "values": ["eu-west-1a", "eu-west-1b"]}]}]},
  {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": "old"},
   "provisioner": "kubernetes.io/aws-ebs"},
  {"kind": "CSINode", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": "n1"},
   "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1",
                         "allocatable": {"count": 25}},
                        {"name": "efs.csi.aws.com", "nodeID": "i-1"}]}},
  {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
   "metadata": {"name": "a", "namespace": "default",
                "annotations": {"volume.beta.kubernetes.io/storage-class": "old"}},
   "spec": {"storageClassName": "gp3"}},
  {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
   "metadata": {"name": "b", "namespace": "default"}, "spec": {"storageClassName": "gp3"}},
  {"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "pv-csi"},
   "spec": {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1", "fsType": "ext4"}}},
  {"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "pv-gce"},
   "spec": {"gcePersistentDisk": {"pdName": "disk-1"}}},
  {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "default"},
   "spec": {"containers": [], "volumes": [
     {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
     {"name": "disk", "awsElasticBlockStore": {"volumeID": "aws://eu-west-1a/vol-2"}},
     {"name": "inline", "csi": {"driver": "inline.example.com"}}]}}]})";

TEST_CASE("storage classes, CSINodes and the volume fields the limits use decode") {
  const ClusterSnapshot s = MustDecode({{"storage.json", kStorage}});
  const DrainStorageClass& gp3 = s.storage_classes.at("gp3");
  CHECK(gp3.provisioner == kEbs);
  CHECK(gp3.binding_mode == "WaitForFirstConsumer");
  REQUIRE(gp3.allowed_topologies.size() == 1);
  CHECK(gp3.allowed_topologies[0].match_expressions[0].values ==
        std::vector<std::string>{"eu-west-1a", "eu-west-1b"});
  CHECK(s.storage_classes.at("old").binding_mode == "Immediate");  // the API's default
  CHECK(s.csi_nodes.at("n1").drivers ==
        std::map<std::string, std::optional<int64_t>>{{kEbs, 25}, {"efs.csi.aws.com", {}}});
  CHECK(s.claims.at("default/a").storage_class == "old");  // the beta annotation wins
  CHECK(s.claims.at("default/b").storage_class == "gp3");
  CHECK(s.volumes.at("pv-csi").disk == AttachedDisk{kEbs, "vol-1", false});
  CHECK(s.volumes.at("pv-gce").disk == AttachedDisk{"kubernetes.io/gce-pd", "disk-1", true});
  const DrainPod& pod = s.pods.at(0);
  REQUIRE(pod.volumes.size() == 3);
  CHECK(pod.volumes[0].kind == VolumeKind::kEphemeral);
  CHECK(ClaimNameOf(pod, pod.volumes[0]) == "p-scratch");
  CHECK(pod.volumes[1].kind == VolumeKind::kInTreeDisk);
  CHECK(pod.volumes[1].disk ==
        AttachedDisk{"kubernetes.io/aws-ebs", "aws://eu-west-1a/vol-2", true});
  CHECK(pod.volumes[2].kind == VolumeKind::kOther);  // inline CSI volumes are not counted
  CHECK(pod.volumes[2].disk.empty());
}

TEST_CASE("bad storage objects are refused naming the object, the field and the value") {
  auto sc = [](const std::string& fields) {
    return R"({"kind": "StorageClass", "metadata": {"name": "s"})" + fields + "}";
  };
  CHECK_THAT(DecodeError({ListOf({sc("")})}), Contains("storageclass s: provisioner: missing"));
  CHECK_THAT(DecodeError({ListOf({sc(R"(, "provisioner": "x", "volumeBindingMode": "Later")")})}),
             Contains(R"(storageclass s: volumeBindingMode: "Later" is not Immediate or )"
                      "WaitForFirstConsumer"));
  CHECK_THAT(DecodeError({ListOf({sc(R"(, "provisioner": "x", "allowedTopologies":
      [{"matchLabelExpressions": [{"key": "zone", "values": []}]}])")})}),
             Contains("storageclass s: allowedTopologies[0].matchLabelExpressions[0].values: "
                      "empty"));
  CHECK_THAT(DecodeError({ListOf({sc(R"(, "provisioner": "x")"), sc(R"(, "provisioner": "x")")})}),
             Contains("storageclass s: listed twice"));
  auto csi = [](const std::string& drivers) {
    return R"({"kind": "CSINode", "metadata": {"name": "n1"}, "spec": {"drivers": )" + drivers +
           "}}";
  };
  CHECK_THAT(DecodeError({ListOf({csi(R"([{"name": "d", "allocatable": {"count": -1}}])")})}),
             Contains("csinode n1: spec.drivers[0].allocatable.count: -1 is negative"));
  CHECK_THAT(DecodeError({ListOf({csi(R"([{"name": "d"}, {"name": "d"}])")})}),
             Contains(R"(csinode n1: spec.drivers[1]: driver "d" listed twice)"));
  CHECK_THAT(DecodeError({ListOf({csi(R"([{"allocatable": {"count": 1}}])")})}),
             Contains("csinode n1: spec.drivers[0].name: missing"));
  CHECK_THAT(DecodeError({ListOf({R"({"kind": "PersistentVolume", "metadata": {"name": "pv"},
          "spec": {"csi": {"driver": "d"}}})"})}),
             Contains("persistentvolume pv: spec.csi.volumeHandle: missing"));
  CHECK_THAT(DecodeError({ListOf({R"({"kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
          "spec": {"containers": [], "volumes": [{"name": "v", "cinder": {}}]}})"})}),
             Contains("volumeID: missing"));
}

}  // namespace
}  // namespace qrm::cluster::drain
