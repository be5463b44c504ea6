// The inter-pod filters in the drain simulation, case by case as kube-scheduler's
// InterPodAffinity and PodTopologySpread plugins decide them, and in whole plans: a replica is
// never planned next to its anti-affine sibling, and pods that moved count where they went.
#include "cluster/drain/pod_affinity.h"

#include <catch2/catch.hpp>

#include "cluster/drain/planner.h"
#include "cluster/drain/simulation.h"
#include "tests/unit/cluster/drain/planner_builders.h"

namespace qrm::cluster::drain {
namespace {

using Catch::Matchers::Contains;

constexpr const char* kHost = "kubernetes.io/hostname";
constexpr const char* kZone = "topology.kubernetes.io/zone";

DrainNode ZonedNode(const std::string& name, const std::string& zone) {
  DrainNode n = MakeNode(name, 16, 64);
  n.labels[kHost] = name;
  if (!zone.empty()) n.labels[kZone] = zone;
  return n;
}

DrainPod Labelled(const std::string& name, const std::string& node, const std::string& app) {
  DrainPod p = MakePod(name, node, 100, 0);
  p.labels["app"] = app;
  return p;
}

LabelSelector App(const std::string& app) {
  LabelSelector s;
  s.match_labels["app"] = app;
  return s;
}

PodAffinityTerm Term(const std::string& app, const std::string& key) {
  PodAffinityTerm t;
  t.selector = App(app);
  t.topology_key = key;
  return t;
}

TopologySpreadConstraint Spread(const std::string& app, int64_t max_skew,
                                const std::string& when = "DoNotSchedule") {
  TopologySpreadConstraint c;
  c.max_skew = max_skew;
  c.topology_key = kZone;
  c.when_unsatisfiable = when;
  c.selector = App(app);
  return c;
}

// n1, n2 in zone a, n3 in zone b, n4 without a zone.
std::vector<DrainNode> FourNodes() {
  return {ZonedNode("n1", "a"), ZonedNode("n2", "a"), ZonedNode("n3", "b"), ZonedNode("n4", "")};
}

TEST_CASE("a pod's anti-affinity refuses every node of a domain holding a match") {
  ClusterSnapshot s = MakeSnapshot(FourNodes(), {Labelled("web-1", "n1", "web")});
  Simulation sim(s, {}, false);
  DrainPod pod = Labelled("web-2", "", "web");
  pod.pod_anti_affinity.push_back(Term("web", kHost));
  CHECK(sim.Fits(pod, 0) == FitFailure::kPodAntiAffinity);
  CHECK(sim.Fits(pod, 1) == FitFailure::kFits);
  pod.pod_anti_affinity[0].topology_key = kZone;
  CHECK(sim.Fits(pod, 0) == FitFailure::kPodAntiAffinity);
  CHECK(sim.Fits(pod, 1) == FitFailure::kPodAntiAffinity);
  CHECK(sim.Fits(pod, 2) == FitFailure::kFits);
  CHECK(sim.Fits(pod, 3) == FitFailure::kFits);  // no zone label: in no domain, no conflict
  // Another namespace's web pods are not selected by a term without namespaces.
  pod.namespace_ = "other";
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);
}

TEST_CASE("an existing pod's anti-affinity refuses the pods it selects in its domain") {
  DrainPod db = Labelled("db", "n1", "db");
  db.pod_anti_affinity.push_back(Term("batch", kZone));
  ClusterSnapshot s = MakeSnapshot(FourNodes(), {db});
  Simulation sim(s, {}, false);
  DrainPod batch = Labelled("batch", "", "batch");
  CHECK(sim.Fits(batch, 1) == FitFailure::kExistingAntiAffinity);
  CHECK(sim.Fits(batch, 2) == FitFailure::kFits);
  CHECK(sim.Fits(Labelled("web", "", "web"), 1) == FitFailure::kFits);
  batch.namespace_ = "other";  // the term selects its own namespace only
  CHECK(sim.Fits(batch, 1) == FitFailure::kFits);
}

TEST_CASE("affinity needs a pod matching every term in each term's domain") {
  DrainPod cache = Labelled("cache", "n1", "cache");
  cache.labels["tier"] = "hot";
  ClusterSnapshot s = MakeSnapshot(FourNodes(), {cache, Labelled("cold", "n3", "cache")});
  Simulation sim(s, {}, false);
  DrainPod web = Labelled("web", "", "web");
  web.pod_affinity.push_back(Term("cache", kZone));
  CHECK(sim.Fits(web, 1) == FitFailure::kFits);         // zone a holds a cache pod
  CHECK(sim.Fits(web, 2) == FitFailure::kFits);         // zone b too
  CHECK(sim.Fits(web, 3) == FitFailure::kPodAffinity);  // no zone label
  // A second term: only a pod matching both counts, so zone b's cache pod no longer does.
  PodAffinityTerm hot = Term("cache", kZone);
  hot.selector->match_labels["tier"] = "hot";
  web.pod_affinity.push_back(hot);
  CHECK(sim.Fits(web, 1) == FitFailure::kFits);
  CHECK(sim.Fits(web, 2) == FitFailure::kPodAffinity);
}

TEST_CASE("the first pod of a group that attracts itself may go anywhere with the key") {
  ClusterSnapshot s = MakeSnapshot(FourNodes(), {Labelled("other", "n1", "other")});
  Simulation sim(s, {}, false);
  DrainPod first = Labelled("first", "", "group");
  first.pod_affinity.push_back(Term("group", kZone));
  CHECK(sim.Fits(first, 2) == FitFailure::kFits);
  CHECK(sim.Fits(first, 3) == FitFailure::kPodAffinity);  // the node must carry the key
  // Affinity to pods it does not match itself: no exception.
  first.pod_affinity[0] = Term("absent", kZone);
  CHECK(sim.Fits(first, 2) == FitFailure::kPodAffinity);
}

TEST_CASE("a term's namespaces, namespaceSelector and an absent labelSelector") {
  DrainPod web = Labelled("web-1", "n1", "web");
  web.namespace_ = "team-a";
  ClusterSnapshot s = MakeSnapshot(FourNodes(), {web});
  s.namespaces["team-a"] = {{"team", "a"}};
  s.namespaces["default"] = {};
  Simulation sim(s, {}, false);
  DrainPod pod = Labelled("web-2", "", "web");
  PodAffinityTerm term = Term("web", kHost);
  pod.pod_anti_affinity = {term};
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);  // own namespace (default) only
  pod.pod_anti_affinity[0].namespaces = {"team-a"};
  CHECK(sim.Fits(pod, 0) == FitFailure::kPodAntiAffinity);
  pod.pod_anti_affinity[0].namespaces.clear();
  pod.pod_anti_affinity[0].namespace_selector = LabelSelector{};  // every namespace
  CHECK(sim.Fits(pod, 0) == FitFailure::kPodAntiAffinity);
  pod.pod_anti_affinity[0].namespace_selector->match_labels["team"] = "b";
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);
  pod.pod_anti_affinity[0].namespace_selector->match_labels["team"] = "a";
  CHECK(sim.Fits(pod, 0) == FitFailure::kPodAntiAffinity);
  pod.pod_anti_affinity[0].selector.reset();  // selects no pod
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);
}

TEST_CASE("topology spread: skew against the least domain, the key required") {
  // Zone a: 2 web pods, zone b: 1.
  ClusterSnapshot s = MakeSnapshot(
      FourNodes(),
      {Labelled("w1", "n1", "web"), Labelled("w2", "n2", "web"), Labelled("w3", "n3", "web")});
  Simulation sim(s, {}, false);
  DrainPod pod = Labelled("w4", "", "web");
  pod.spread.push_back(Spread("web", 1));
  CHECK(sim.Fits(pod, 0) == FitFailure::kTopologySpread);  // 2 + 1 - 1 = 2 > 1
  CHECK(sim.Fits(pod, 2) == FitFailure::kFits);            // 1 + 1 - 1 = 1
  CHECK(sim.Fits(pod, 3) == FitFailure::kTopologySpread);  // no zone label
  pod.spread[0].max_skew = 2;
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);
  // A pod its own selector does not match adds nothing to the skew.
  pod.spread[0] = Spread("web", 1);
  pod.labels["app"] = "api";
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);  // 2 + 0 - 1 = 1
  pod.labels["app"] = "web";
  pod.spread[0].when_unsatisfiable = "ScheduleAnyway";  // a score, not a filter
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);
  CHECK(sim.Fits(pod, 3) == FitFailure::kFits);
}

TEST_CASE("topology spread: minDomains, terminating pods and the node inclusion policies") {
  DrainPod leaving = Labelled("w0", "n3", "web");
  leaving.deletion_time = 1;
  ClusterSnapshot s = MakeSnapshot(FourNodes(), {Labelled("w1", "n1", "web"), leaving});
  s.nodes[2].taints.push_back({"dedicated", "x", "NoSchedule"});
  Simulation sim(s, {}, false);
  DrainPod pod = Labelled("w2", "", "web");
  pod.tolerations.push_back({"dedicated", "Equal", "x", "NoSchedule"});
  pod.spread.push_back(Spread("web", 1));
  // Zone a 1, zone b 0 (the terminating pod does not count).
  CHECK(sim.Fits(pod, 0) == FitFailure::kTopologySpread);
  CHECK(sim.Fits(pod, 2) == FitFailure::kFits);
  // Three domains wanted, two exist: the least counts as 0.
  pod.spread[0].min_domains = 3;
  pod.spread[0].max_skew = 1;
  CHECK(sim.Fits(pod, 2) == FitFailure::kFits);  // 0 + 1 - 0
  CHECK(sim.Fits(pod, 0) == FitFailure::kTopologySpread);
  pod.spread[0].min_domains.reset();
  // Honouring taints: zone b's only node is tainted and leaves the domains, so zone a is the
  // least; a pod that does not tolerate the taint sees one domain.
  pod.tolerations.clear();
  pod.spread[0].honor_node_taints = true;
  CHECK(sim.Fits(pod, 1) == FitFailure::kFits);  // 1 + 1 - 1
  // Honouring node affinity (the default): nodes the pod may not use are no domain.
  pod.spread[0].honor_node_taints = false;
  pod.node_selector[kZone] = "a";
  CHECK(sim.Fits(pod, 1) == FitFailure::kFits);
  pod.spread[0].honor_node_affinity = false;
  CHECK(sim.Fits(pod, 1) == FitFailure::kTopologySpread);
}

TEST_CASE("topology spread: matchLabelKeys narrow the selector to the pod's value") {
  DrainPod v1 = Labelled("w1", "n1", "web");
  v1.labels["rev"] = "1";
  ClusterSnapshot s = MakeSnapshot(FourNodes(), {v1, Labelled("w2", "n2", "web")});
  Simulation sim(s, {}, false);
  DrainPod pod = Labelled("w3", "", "web");
  pod.labels["rev"] = "2";
  pod.spread.push_back(Spread("web", 1));
  CHECK(sim.Fits(pod, 0) == FitFailure::kTopologySpread);  // 2 + 1 - 0
  pod.spread[0].match_label_keys = {"rev"};
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);  // no rev=2 pod yet: 0 + 1 - 0
}

TEST_CASE("a removed node's pods stop counting and revert brings them back") {
  ClusterSnapshot s = MakeSnapshot(FourNodes(), {Labelled("web-1", "n1", "web")});
  Simulation sim(s, {}, false);
  DrainPod pod = Labelled("web-2", "", "web");
  pod.pod_anti_affinity.push_back(Term("web", kZone));
  CHECK(sim.Fits(pod, 1) == FitFailure::kPodAntiAffinity);
  sim.Fork();
  sim.RemoveNode(0);
  CHECK(sim.Fits(pod, 1) == FitFailure::kFits);
  // The moved pod counts where it goes.
  std::optional<NumaPlacement> placement;
  REQUIRE(sim.Place(s.pods[0], 2, &placement) == FitFailure::kFits);
  CHECK(sim.Fits(pod, 1) == FitFailure::kFits);
  CHECK(sim.Fits(pod, 2) == FitFailure::kPodAntiAffinity);
  sim.Revert();
  CHECK(sim.Fits(pod, 1) == FitFailure::kPodAntiAffinity);
  CHECK(sim.Fits(pod, 2) == FitFailure::kFits);
}

TEST_CASE("a terminating pod counts where it is moved to, not where it is") {
  // Zone a: w1 and the terminating w0, zone b: w2. w0's node leaves; its replacement lands
  // in zone b and counts there.
  DrainPod leaving = Labelled("w0", "n3", "web");
  leaving.deletion_time = 1;
  ClusterSnapshot s = MakeSnapshot(
      {ZonedNode("n1", "a"), ZonedNode("n2", "b"), ZonedNode("n3", "a"), ZonedNode("n4", "b")},
      {Labelled("w1", "n1", "web"), Labelled("w2", "n2", "web"), leaving});
  Simulation sim(s, {}, false);
  DrainPod pod = Labelled("w3", "", "web");
  pod.spread.push_back(Spread("web", 1));
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);  // a 1, b 1: 1 + 1 - 1
  sim.Fork();
  sim.RemoveNode(2);
  std::optional<NumaPlacement> placement;
  REQUIRE(sim.Place(s.pods[2], 3, &placement) == FitFailure::kFits);
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);            // a 1, b 2: 1 + 1 - 1
  CHECK(sim.Fits(pod, 1) == FitFailure::kTopologySpread);  // 2 + 1 - 1
  sim.Revert();
  CHECK(sim.Fits(pod, 1) == FitFailure::kFits);
}

TEST_CASE("a removed node is no spread domain") {
  ClusterSnapshot s =
      MakeSnapshot({ZonedNode("n1", "a"), ZonedNode("n2", "b"), ZonedNode("n3", "c")},
                   {Labelled("w1", "n1", "web"), Labelled("w2", "n2", "web")});
  Simulation sim(s, {}, false);
  DrainPod pod = Labelled("w3", "", "web");
  pod.spread.push_back(Spread("web", 1));
  CHECK(sim.Fits(pod, 0) == FitFailure::kTopologySpread);  // zone c holds 0: 1 + 1 - 0
  sim.RemoveNode(2);
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);  // zones a and b: 1 + 1 - 1
}

// Two replicas that must not share a node, on two small nodes, and a big node.
ClusterSnapshot Replicas() {
  std::vector<DrainNode> nodes = {ZonedNode("s1", "a"), ZonedNode("s2", "a"),
                                  ZonedNode("big", "a")};
  nodes[2].allocatable.cpu_milli = 64000;
  std::vector<DrainPod> pods = {Labelled("web-1", "s1", "web"), Labelled("web-2", "s2", "web"),
                                MakePod("base", "big", 40000, 8)};
  for (int i = 0; i < 2; ++i) pods[i].pod_anti_affinity.push_back(Term("web", kHost));
  return MakeSnapshot(nodes, pods);
}

TEST_CASE("a plan never puts a replica beside its anti-affine sibling") {
  const ClusterSnapshot s = Replicas();
  StatusOr<Plan> plan = MakePlan(s, {}, PlannerOptions(), PlannerState());
  REQUIRE(plan.ok());
  // s1 goes first (by name at equal use); web-1 may go to big, not to s2 (web-2 is there).
  REQUIRE(plan->candidates.size() == 1);
  CHECK(plan->candidates[0].node == "s1");
  REQUIRE(plan->candidates[0].moves.size() == 1);
  CHECK(plan->candidates[0].moves[0].destination == "big");
  // s2's replica has nowhere left: big holds web-1 now, s1 is leaving.
  const NotDrainable* s2 = nullptr;
  for (const NotDrainable& n : plan->not_drainable)
    if (n.node == "s2") s2 = &n;
  REQUIRE(s2 != nullptr);
  CHECK(s2->kind == NotDrainableKind::kNoPlaceForPod);
  CHECK(s2->pod == "default/web-2");
  CHECK_THAT(s2->reason, Contains("pod anti-affinity"));
}

TEST_CASE("the pods of a node being drained count where they are planned to go") {
  ClusterSnapshot s = Replicas();
  PlannerState state;
  state.deleted_nodes.insert("s1");
  StatusOr<Plan> plan = MakePlan(s, {}, PlannerOptions(), state);
  REQUIRE(plan.ok());
  REQUIRE(plan->reinjected.size() == 1);
  CHECK(plan->reinjected[0].destination == "big");
  CHECK(plan->candidates.empty());
}

TEST_CASE("an evicted pod selecting namespaces by label needs the snapshot's Namespaces") {
  ClusterSnapshot s = Replicas();
  PlannerState state;
  RecentEviction evicted{Labelled("web-0", "s1", "web"), 100};
  PodAffinityTerm term = Term("web", kHost);
  term.namespace_selector = LabelSelector{{{"team", "a"}}, {}};
  evicted.pod.pod_anti_affinity.push_back(term);
  state.recent_evictions.push_back(evicted);
  PlannerOptions options;
  options.now = 110;
  StatusOr<Plan> plan = MakePlan(s, {}, options, state);
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.status().message(),
             Contains("planner state: recentEvictions: pod default/web-0: spec.affinity."
                      "podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
                      "namespaceSelector: selects namespaces by label"));
  s.namespaces["default"] = {{"team", "a"}};
  plan = MakePlan(s, {}, options, state);
  REQUIRE(plan.ok());
  // The evicted replica takes big (s2 holds web-2); web-1 then finds no node.
  REQUIRE(plan->reinjected.size() == 1);
  CHECK(plan->reinjected[0].destination == "big");
  CHECK(plan->candidates.empty());
}

}  // namespace
}  // namespace qrm::cluster::drain
