// The volume filters in the drain simulation: a pod goes only where its bound volumes can be
// used (the PersistentVolume's node affinity and zone labels), a claim or volume that does not
// exist fits nowhere, an unbound claim anywhere; and their decoding from Kubernetes JSON.
#include "cluster/drain/volume_topology.h"

#include <catch2/catch.hpp>

#include "cluster/drain/planner.h"
#include "cluster/drain/simulation.h"
#include "tests/unit/cluster/drain/fixtures.h"
#include "tests/unit/cluster/drain/planner_builders.h"

namespace qrm::cluster::drain {
namespace {

using Catch::Matchers::Contains;

constexpr const char* kZone = "topology.kubernetes.io/zone";

DrainNode ZoneNode(const std::string& name, const std::string& zone) {
  DrainNode n = MakeNode(name, 16, 64);
  n.labels["kubernetes.io/hostname"] = name;
  n.labels[kZone] = zone;
  return n;
}

DrainPod WithClaim(const std::string& name, const std::string& node, const std::string& claim) {
  DrainPod p = MakePod(name, node, 100, 0);
  p.volumes.push_back({"data", VolumeKind::kPersistentVolumeClaim, "", claim});
  return p;
}

ClusterSnapshot Cluster(std::vector<DrainPod> pods) {
  ClusterSnapshot s = MakeSnapshot({ZoneNode("a1", "a"), ZoneNode("a2", "a"), ZoneNode("b1", "b")},
                                   std::move(pods));
  s.claims_listed = true;
  s.volumes_listed = true;
  s.claims["default/zonal"] = {"default", "zonal", "pv-zonal"};
  s.claims["default/local"] = {"default", "local", "pv-local"};
  s.claims["default/unbound"] = {"default", "unbound", ""};
  s.claims["default/dangling"] = {"default", "dangling", "pv-gone"};
  s.volumes["pv-zonal"] = {"pv-zonal", {{kZone, "a"}}, {}};
  SelectorRequirement host{"kubernetes.io/hostname", SelectorOp::kIn, "In", {"a1"}};
  s.volumes["pv-local"] = {"pv-local", {}, {{{host}}}};
  return s;
}

TEST_CASE("a bound volume's zone label and node affinity decide where its pod may go") {
  ClusterSnapshot s = Cluster({});
  const DrainNode &a1 = s.nodes[0], &a2 = s.nodes[1], &b1 = s.nodes[2];
  CHECK(CheckVolumes(s, WithClaim("p", "", "zonal"), a2) == VolumeFit::kFits);
  CHECK(CheckVolumes(s, WithClaim("p", "", "zonal"), b1) == VolumeFit::kZone);
  CHECK(CheckVolumes(s, WithClaim("p", "", "local"), a1) == VolumeFit::kFits);
  CHECK(CheckVolumes(s, WithClaim("p", "", "local"), a2) == VolumeFit::kNodeAffinity);
  CHECK(CheckVolumes(s, WithClaim("p", "", "unbound"), b1) == VolumeFit::kFits);
  CHECK(CheckVolumes(s, WithClaim("p", "", "dangling"), a1) == VolumeFit::kVolumeMissing);
  CHECK(CheckVolumes(s, WithClaim("p", "", "nope"), a1) == VolumeFit::kClaimMissing);
  // Another namespace's claim of the same name is not the pod's.
  DrainPod other = WithClaim("p", "", "zonal");
  other.namespace_ = "other";
  CHECK(CheckVolumes(s, other, a1) == VolumeFit::kClaimMissing);
  // Without claims or without volumes in the input nothing is checked.
  s.volumes_listed = false;
  CHECK(CheckVolumes(s, WithClaim("p", "", "nope"), b1) == VolumeFit::kFits);
  s.volumes_listed = true;
  s.claims_listed = false;
  CHECK(CheckVolumes(s, WithClaim("p", "", "dangling"), b1) == VolumeFit::kFits);
}

TEST_CASE("zone labels: several zones, the beta spelling, and nodes without the labels") {
  ClusterSnapshot s = Cluster({});
  const DrainPod pod = WithClaim("p", "", "zonal");
  s.volumes["pv-zonal"].labels = {{kZone, "b__ c"}};  // elements are trimmed
  CHECK(CheckVolumes(s, pod, s.nodes[0]) == VolumeFit::kZone);
  CHECK(CheckVolumes(s, pod, s.nodes[2]) == VolumeFit::kFits);
  s.nodes[2].labels[kZone] = "c";
  CHECK(CheckVolumes(s, pod, s.nodes[2]) == VolumeFit::kFits);
  s.volumes["pv-zonal"].labels = {{kZone, "a____b"}};  // an empty element: the label is ignored
  CHECK(CheckVolumes(s, pod, s.nodes[2]) == VolumeFit::kFits);
  // A beta label on the volume is met by the node's GA label; not the other way round.
  s.volumes["pv-zonal"].labels = {{"failure-domain.beta.kubernetes.io/zone", "a"}};
  CHECK(CheckVolumes(s, pod, s.nodes[0]) == VolumeFit::kFits);
  CHECK(CheckVolumes(s, pod, s.nodes[2]) == VolumeFit::kZone);
  s.volumes["pv-zonal"].labels = {{kZone, "a"}};
  s.nodes[0].labels.erase(kZone);
  s.nodes[0].labels["failure-domain.beta.kubernetes.io/zone"] = "a";
  CHECK(CheckVolumes(s, pod, s.nodes[0]) == VolumeFit::kZone);
  // A node with no zone or region label at all takes any volume (a one-zone cluster).
  s.nodes[0].labels.erase("failure-domain.beta.kubernetes.io/zone");
  CHECK(CheckVolumes(s, pod, s.nodes[0]) == VolumeFit::kFits);
}

TEST_CASE("a pod on a local volume has nowhere to go and a zonal one stays in its zone") {
  // a1 is the emptiest: a pod on a1's local volume keeps it; a2's zonal pod may go to a1 only.
  ClusterSnapshot s = Cluster({WithClaim("db", "a1", "local"), WithClaim("web", "a2", "zonal"),
                               MakePod("fill", "b1", 9000, 1)});
  StatusOr<Plan> plan = MakePlan(s, {}, PlannerOptions(), PlannerState());
  REQUIRE(plan.ok());
  bool a1_refused = false;
  for (const NotDrainable& n : plan->not_drainable) {
    if (n.node != "a1") continue;
    a1_refused = true;
    CHECK(n.kind == NotDrainableKind::kNoPlaceForPod);
    CHECK_THAT(n.reason, Contains("2 volume node affinity or zone"));
  }
  CHECK(a1_refused);
  REQUIRE(plan->candidates.size() == 1);
  CHECK(plan->candidates[0].node == "a2");
  REQUIRE(plan->candidates[0].moves.size() == 1);
  CHECK(plan->candidates[0].moves[0].destination == "a1");
}

constexpr const char* kVolumes = R"({"apiVersion": "v1", "kind": "List", "items": [
  {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
   "metadata": {"name": "data", "namespace": "default"}, "spec": {"volumeName": "pv-1"}},
  {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
   "metadata": {"name": "pending", "namespace": "default"}, "spec": {}},
  {"kind": "PersistentVolume", "apiVersion": "v1",
   "metadata": {"name": "pv-1", "labels": {"topology.kubernetes.io/zone": "a"}},
   "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [
     {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                            "values": ["n1"]}]}]}}}}]})";

TEST_CASE("claims and volumes decode, and empty lists of both still turn the check on") {
  ClusterSnapshot s = MustDecode({{"volumes.json", kVolumes}});
  CHECK(s.VolumesKnown());
  CHECK(s.claims.at("default/data").volume_name == "pv-1");
  CHECK(s.claims.at("default/pending").volume_name.empty());
  const DrainVolume& pv = s.volumes.at("pv-1");
  CHECK(pv.labels.at("topology.kubernetes.io/zone") == "a");
  REQUIRE(pv.node_affinity.size() == 1);
  CHECK(pv.node_affinity[0].match_expressions[0].values == std::vector<std::string>{"n1"});
  const ClusterSnapshot empty =
      MustDecode({{"pvc.json", R"({"kind": "PersistentVolumeClaimList", "items": []})"},
                  {"pv.json", R"({"kind": "PersistentVolumeList", "items": []})"}});
  CHECK(empty.VolumesKnown());
  // One list without the other leaves the check off (a bound claim would find no volume).
  CHECK_FALSE(MustDecode({{"pvc.json", R"({"kind": "PersistentVolumeClaimList", "items": []})"}})
                  .VolumesKnown());
  CHECK_FALSE(MustDecode({{"pods.json", R"({"kind": "PodList", "items": []})"}}).VolumesKnown());
}

TEST_CASE("a bad volume node selector or a claim listed twice is refused") {
  const std::string pv = R"({"kind": "PersistentVolume", "metadata": {"name": "pv"},
      "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions":
      [{"key": "k", "operator": "Near", "values": ["x"]}]}]}}}})";
  CHECK_THAT(DecodeError({ListOf({pv})}),
             Contains("persistentvolume pv: spec.nodeAffinity.required.nodeSelectorTerms[0]."
                      R"(matchExpressions[0]: operator: "Near" is not In)"));
  const std::string pvc =
      R"({"kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "d"}})";
  CHECK_THAT(DecodeError({ListOf({pvc, pvc})}),
             Contains("persistentvolumeclaim d/c: listed twice"));
}

}  // namespace
}  // namespace qrm::cluster::drain
