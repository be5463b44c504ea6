// Decoding a pod's required pod (anti-)affinity terms, its topology spread constraints and the
// Namespaces, and refusing what the API server's validation refuses, naming field and value.
#include "cluster/drain/pod_affinity_json.h"

#include <catch2/catch.hpp>

#include "tests/unit/cluster/drain/fixtures.h"

namespace qrm::cluster::drain {
namespace {

using Catch::Matchers::Contains;

std::string PodWithSpec(const std::string& spec) {
  return R"({"kind": "Pod", "metadata": {"name": "p", "namespace": "default",
      "labels": {"app": "web"}}, "spec": )" +
         spec + "}";
}

std::string Spread(const std::string& fields) {
  return PodWithSpec(R"({"topologySpreadConstraints": [{)" + fields + "}]}");
}

std::string AntiTerm(const std::string& fields) {
  return PodWithSpec(
      R"({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{)" +
      fields + "}]}}}");
}

constexpr const char* kFullSpec = R"({
  "affinity": {
    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchLabels": {"app": "cache"},
                         "matchExpressions": [{"key": "tier", "operator": "In", "values": ["hot"]}]},
       "namespaces": ["cache", "default"], "topologyKey": "topology.kubernetes.io/zone"}]},
    "podAntiAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "namespaceSelector": {},
         "topologyKey": "kubernetes.io/hostname"},
        {"namespaceSelector": {"matchLabels": {"team": "a"}}, "topologyKey": "rack"}],
      "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": {"topologyKey": "ignored"}}]}},
  "topologySpreadConstraints": [
    {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone",
     "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}},
     "minDomains": 3, "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor",
     "matchLabelKeys": ["pod-template-hash"]},
    {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}]
})";

constexpr const char* kNamespaces = R"({"apiVersion": "v1", "kind": "NamespaceList", "items": [
  {"metadata": {"name": "default", "labels": {"kubernetes.io/metadata.name": "default"}}},
  {"metadata": {"name": "team-a", "labels": {"team": "a"}}}]})";

TEST_CASE("required pod affinity terms, spread constraints and namespaces decode") {
  ClusterSnapshot s =
      MustDecode({ListOf({PodWithSpec(kFullSpec)}), {"namespaces.json", kNamespaces}});
  REQUIRE(s.pods.size() == 1);
  const DrainPod& pod = s.pods[0];
  REQUIRE(pod.pod_affinity.size() == 1);
  const PodAffinityTerm& cache = pod.pod_affinity[0];
  REQUIRE(cache.selector.has_value());
  CHECK(cache.selector->match_labels == std::map<std::string, std::string>{{"app", "cache"}});
  REQUIRE(cache.selector->match_expressions.size() == 1);
  CHECK(cache.selector->match_expressions[0].op == SelectorOp::kIn);
  CHECK(cache.namespaces == std::vector<std::string>{"cache", "default"});
  CHECK_FALSE(cache.namespace_selector.has_value());
  CHECK(cache.topology_key == "topology.kubernetes.io/zone");
  // Only the required terms are read; preferred ones are scores, not filters.
  REQUIRE(pod.pod_anti_affinity.size() == 2);
  CHECK(pod.pod_anti_affinity[0].namespace_selector == LabelSelector{});
  CHECK_FALSE(pod.pod_anti_affinity[1].selector.has_value());
  CHECK(pod.pod_anti_affinity[1].namespace_selector->match_labels.at("team") == "a");
  REQUIRE(pod.spread.size() == 2);
  const TopologySpreadConstraint& zone = pod.spread[0];
  CHECK(zone.max_skew == 2);
  CHECK(zone.when_unsatisfiable == "DoNotSchedule");
  CHECK(zone.min_domains == std::optional<int64_t>(3));
  CHECK_FALSE(zone.honor_node_affinity);
  CHECK(zone.honor_node_taints);
  CHECK(zone.match_label_keys == std::vector<std::string>{"pod-template-hash"});
  CHECK(pod.spread[1].honor_node_affinity);  // the defaults: Honor and Ignore
  CHECK_FALSE(pod.spread[1].honor_node_taints);
  CHECK_FALSE(pod.spread[1].selector.has_value());
  CHECK(s.namespaces.at("team-a").at("team") == "a");
  CHECK(s.namespaces.size() == 2);
}

TEST_CASE("spread constraints the API server refuses are refused") {
  CHECK_THAT(DecodeError({ListOf({Spread(R"("topologyKey": "z", "whenUnsatisfiable": )"
                                         R"("DoNotSchedule")")})}),
             Contains("pod default/p: spec.topologySpreadConstraints[0]: maxSkew: 0 must be "
                      "greater than zero"));
  CHECK_THAT(DecodeError({ListOf({Spread(R"("maxSkew": 1, "topologyKey": "z", )"
                                         R"("whenUnsatisfiable": "Never")")})}),
             Contains(R"(whenUnsatisfiable: "Never" is not DoNotSchedule or ScheduleAnyway)"));
  CHECK_THAT(
      DecodeError({ListOf({Spread(R"("maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule")")})}),
      Contains("spec.topologySpreadConstraints[0]: topologyKey: must be set"));
  CHECK_THAT(
      DecodeError({ListOf({Spread(R"("maxSkew": 1, "topologyKey": "z", )"
                                  R"("whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2)")})}),
      Contains("minDomains: 2 may only be set with whenUnsatisfiable DoNotSchedule"));
  CHECK_THAT(
      DecodeError({ListOf({Spread(R"("maxSkew": 1, "topologyKey": "z", )"
                                  R"("whenUnsatisfiable": "DoNotSchedule", "minDomains": 0)")})}),
      Contains("minDomains: 0 must be greater than zero"));
  CHECK_THAT(DecodeError({ListOf({Spread(R"("maxSkew": 1, "topologyKey": "z", )"
                                         R"("whenUnsatisfiable": "DoNotSchedule", )"
                                         R"("nodeTaintsPolicy": "Sometimes")")})}),
             Contains(R"(nodeTaintsPolicy: "Sometimes" is not Honor or Ignore)"));
  CHECK_THAT(DecodeError({ListOf({Spread(R"("maxSkew": "1")")})}),
             Contains("spec.topologySpreadConstraints[0].maxSkew"));
}

TEST_CASE("repeated constraints and misused matchLabelKeys are refused") {
  const std::string zone = R"({"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": )"
                           R"("DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}})";
  CHECK_THAT(DecodeError({ListOf(
                 {PodWithSpec(R"({"topologySpreadConstraints": [)" + zone + "," + zone + "]}")})}),
             Contains(R"(spec.topologySpreadConstraints[1]: {topologyKey "z", whenUnsatisfiable )"
                      "DoNotSchedule} repeats constraint 0"));
  CHECK_THAT(DecodeError({ListOf({Spread(R"("maxSkew": 1, "topologyKey": "z", )"
                                         R"("whenUnsatisfiable": "DoNotSchedule", )"
                                         R"("matchLabelKeys": ["rev"])")})}),
             Contains("matchLabelKeys: must not be set when labelSelector is not set"));
  CHECK_THAT(DecodeError({ListOf({Spread(R"("maxSkew": 1, "topologyKey": "z", )"
                                         R"("whenUnsatisfiable": "DoNotSchedule", )"
                                         R"("labelSelector": {"matchLabels": {"app": "web"}}, )"
                                         R"("matchLabelKeys": ["app"])")})}),
             Contains(R"(matchLabelKeys: "app" is also in labelSelector)"));
}

TEST_CASE("with Namespaces listed every pod's namespace must be among them") {
  const std::string other = R"({"kind": "Namespace", "metadata": {"name": "other"}})";
  CHECK_THAT(DecodeError({ListOf({PodWithSpec("{}"), other})}),
             Contains(R"(pod default/p: metadata.namespace: "default" is not among the )"
                      "input's Namespaces"));
}

TEST_CASE("pod affinity terms the API server refuses are refused") {
  CHECK_THAT(
      DecodeError({ListOf({AntiTerm(R"("labelSelector": {})")})}),
      Contains("pod default/p: spec.affinity.podAntiAffinity."
               "requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: must be set"));
  CHECK_THAT(
      DecodeError({ListOf({AntiTerm(R"("topologyKey": "h", "labelSelector": {"matchExpressions":)"
                                    R"( [{"key": "n", "operator": "Gt", "values": ["1"]}]})")})}),
      Contains(
          "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0]:"
          R"( operator: "Gt" is not In, NotIn, Exists or DoesNotExist)"));
}

TEST_CASE("a namespaceSelector by label needs the Namespaces in the input") {
  const std::string pod =
      AntiTerm(R"("topologyKey": "h", "namespaceSelector": {"matchLabels": {"team": "a"}})");
  CHECK_THAT(DecodeError({ListOf({pod})}),
             Contains("[0].namespaceSelector: selects namespaces by label, and the input lists "
                      "no Namespaces"));
  ClusterSnapshot s = MustDecode({ListOf({pod}), {"namespaces.json", kNamespaces}});
  CHECK(s.pods[0].pod_anti_affinity.size() == 1);
  // An empty one selects every namespace and needs no labels.
  MustDecode({ListOf({AntiTerm(R"("topologyKey": "h", "namespaceSelector": {})")})});
}

TEST_CASE("a Namespace listed twice is refused") {
  const std::string ns = R"({"kind": "Namespace", "metadata": {"name": "a"}})";
  CHECK_THAT(DecodeError({ListOf({ns, ns})}), Contains("namespace a: listed twice"));
}

}  // namespace
}  // namespace qrm::cluster::drain
