#include "cluster/drain/pod_affinity_json.h"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cluster/drain/selector_json.h"
#include "common/quote.h"

namespace qrm::cluster::drain {
namespace {

using json::Field;

constexpr const char* kRequired = "requiredDuringSchedulingIgnoredDuringExecution";

Status ReadStrings(const Field& object, const char* key, std::vector<std::string>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> list, json::Member(object, key));
  if (!list) return Status::Ok();
  return json::ForEachItem(*list, [&](const Field& v) -> Status {
    QRM_ASSIGN_OR_RETURN(std::string s, json::String(v));
    out->push_back(std::move(s));
    return Status::Ok();
  });
}

// affinity.<kind>.requiredDuringSchedulingIgnoredDuringExecution[]
Status ReadTerms(const Field& affinity, const char* kind, std::vector<PodAffinityTerm>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> section, json::Member(affinity, kind));
  if (!section) return Status::Ok();
  QRM_ASSIGN_OR_RETURN(std::optional<Field> terms, json::Member(*section, kRequired));
  if (!terms) return Status::Ok();
  return json::ForEachItem(*terms, [&](const Field& f) -> Status {
    PodAffinityTerm term;
    QRM_RETURN_IF_ERROR(ReadLabelSelector(f, "labelSelector", &term.selector));
    QRM_RETURN_IF_ERROR(ReadStrings(f, "namespaces", &term.namespaces));
    QRM_RETURN_IF_ERROR(ReadLabelSelector(f, "namespaceSelector", &term.namespace_selector));
    QRM_RETURN_IF_ERROR(json::ReadString(f, "topologyKey", &term.topology_key));
    out->push_back(std::move(term));
    return Status::Ok();
  });
}

Status ReadOptionalInt(const Field& object, const char* key, std::optional<int64_t>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> field, json::Member(object, key));
  if (!field) return Status::Ok();
  QRM_ASSIGN_OR_RETURN(int64_t v, json::Int(*field));
  *out = v;
  return Status::Ok();
}

StatusOr<TopologySpreadConstraint> ReadConstraint(const Field& f) {
  TopologySpreadConstraint c;
  std::optional<int64_t> max_skew;
  QRM_RETURN_IF_ERROR(ReadOptionalInt(f, "maxSkew", &max_skew));
  c.max_skew = max_skew.value_or(0);
  QRM_RETURN_IF_ERROR(json::ReadString(f, "topologyKey", &c.topology_key));
  QRM_RETURN_IF_ERROR(json::ReadString(f, "whenUnsatisfiable", &c.when_unsatisfiable));
  QRM_RETURN_IF_ERROR(ReadLabelSelector(f, "labelSelector", &c.selector));
  QRM_RETURN_IF_ERROR(ReadOptionalInt(f, "minDomains", &c.min_domains));
  QRM_RETURN_IF_ERROR(json::ReadString(f, "nodeAffinityPolicy", &c.node_affinity_policy_text));
  QRM_RETURN_IF_ERROR(json::ReadString(f, "nodeTaintsPolicy", &c.node_taints_policy_text));
  c.honor_node_affinity = c.node_affinity_policy_text != "Ignore";
  c.honor_node_taints = c.node_taints_policy_text == "Honor";
  QRM_RETURN_IF_ERROR(ReadStrings(f, "matchLabelKeys", &c.match_label_keys));
  return c;
}

void CheckTerm(const ClusterSnapshot& snapshot, const PodAffinityTerm& term,
               const std::string& path, const std::string& object, ErrorList* errors) {
  if (term.topology_key.empty()) {
    errors->Add(InvalidArgumentError(
        fmt::format("{}: {}.topologyKey: must be set (a required term needs one)", object, path)));
  }
  if (term.selector) {
    CheckRequirements(term.selector->match_expressions, false,
                      path + ".labelSelector.matchExpressions", errors, object);
  }
  if (!term.namespace_selector) return;
  const LabelSelector& ns = *term.namespace_selector;
  CheckRequirements(ns.match_expressions, false, path + ".namespaceSelector.matchExpressions",
                    errors, object);
  const bool by_label = !ns.match_labels.empty() || !ns.match_expressions.empty();
  if (by_label && snapshot.namespaces.empty()) {
    errors->Add(InvalidArgumentError(
        fmt::format("{}: {}.namespaceSelector: selects namespaces by label, and the input lists no "
                    "Namespaces (add `kubectl get namespaces -o json`)",
                    object, path)));
  }
}

void CheckTerms(const ClusterSnapshot& snapshot, const std::vector<PodAffinityTerm>& terms,
                const char* kind, const std::string& object, ErrorList* errors) {
  for (size_t i = 0; i < terms.size(); ++i) {
    CheckTerm(snapshot, terms[i], fmt::format("spec.affinity.{}.{}[{}]", kind, kRequired, i),
              object, errors);
  }
}

Status CheckPolicy(const std::string& text, const char* field) {
  if (text.empty() || text == "Honor" || text == "Ignore") return Status::Ok();
  return InvalidArgumentError(fmt::format("{}: {} is not Honor or Ignore", field, Quote(text)));
}

// matchLabelKeys need a labelSelector and may not name a key it already selects on.
Status CheckMatchLabelKeys(const TopologySpreadConstraint& c) {
  if (c.match_label_keys.empty()) return Status::Ok();
  if (!c.selector) {
    return InvalidArgumentError("matchLabelKeys: must not be set when labelSelector is not set");
  }
  for (const std::string& key : c.match_label_keys) {
    bool in_selector = c.selector->match_labels.contains(key);
    for (const SelectorRequirement& r : c.selector->match_expressions) in_selector |= r.key == key;
    if (in_selector) {
      return InvalidArgumentError(
          fmt::format("matchLabelKeys: {} is also in labelSelector", Quote(key)));
    }
  }
  return Status::Ok();
}

Status CheckConstraintFields(const TopologySpreadConstraint& c) {
  if (c.max_skew <= 0) {
    return InvalidArgumentError(fmt::format("maxSkew: {} must be greater than zero", c.max_skew));
  }
  if (c.topology_key.empty()) return InvalidArgumentError("topologyKey: must be set");
  if (c.when_unsatisfiable != "DoNotSchedule" && c.when_unsatisfiable != "ScheduleAnyway") {
    return InvalidArgumentError(
        fmt::format("whenUnsatisfiable: {} is not DoNotSchedule or "
                    "ScheduleAnyway",
                    Quote(c.when_unsatisfiable)));
  }
  if (c.min_domains && *c.min_domains <= 0) {
    return InvalidArgumentError(
        fmt::format("minDomains: {} must be greater than zero", *c.min_domains));
  }
  if (c.min_domains && c.when_unsatisfiable != "DoNotSchedule") {
    return InvalidArgumentError(fmt::format(
        "minDomains: {} may only be set with whenUnsatisfiable DoNotSchedule", *c.min_domains));
  }
  QRM_RETURN_IF_ERROR(CheckPolicy(c.node_affinity_policy_text, "nodeAffinityPolicy"));
  QRM_RETURN_IF_ERROR(CheckPolicy(c.node_taints_policy_text, "nodeTaintsPolicy"));
  return CheckMatchLabelKeys(c);
}

void CheckSpread(const DrainPod& pod, const std::string& object, ErrorList* errors) {
  for (size_t i = 0; i < pod.spread.size(); ++i) {
    const std::string path = fmt::format("spec.topologySpreadConstraints[{}]", i);
    errors->Add(
        CheckConstraintFields(pod.spread[i]).WithContext(fmt::format("{}: {}", object, path)));
    for (size_t j = 0; j < i; ++j) {
      if (pod.spread[j].topology_key == pod.spread[i].topology_key &&
          pod.spread[j].when_unsatisfiable == pod.spread[i].when_unsatisfiable) {
        errors->Add(InvalidArgumentError(fmt::format(
            "{}: {}: {{topologyKey {}, whenUnsatisfiable {}}} repeats constraint {}", object, path,
            Quote(pod.spread[i].topology_key), pod.spread[i].when_unsatisfiable, j)));
      }
    }
    if (pod.spread[i].selector) {
      CheckRequirements(pod.spread[i].selector->match_expressions, false,
                        path + ".labelSelector.matchExpressions", errors, object);
    }
  }
}

}  // namespace

Status ReadPodAffinity(const Field& spec, DrainPod* pod) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> affinity, json::Member(spec, "affinity"));
  if (affinity) {
    QRM_RETURN_IF_ERROR(ReadTerms(*affinity, "podAffinity", &pod->pod_affinity));
    QRM_RETURN_IF_ERROR(ReadTerms(*affinity, "podAntiAffinity", &pod->pod_anti_affinity));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spread,
                       json::Member(spec, "topologySpreadConstraints"));
  if (!spread) return Status::Ok();
  return json::ForEachItem(*spread, [&](const Field& f) -> Status {
    QRM_ASSIGN_OR_RETURN(TopologySpreadConstraint c, ReadConstraint(f));
    pod->spread.push_back(std::move(c));
    return Status::Ok();
  });
}

void CheckPodAffinity(const ClusterSnapshot& snapshot, const DrainPod& pod, ErrorList* errors) {
  const std::string object = "pod " + pod.Key();
  // A namespaceSelector reads every namespace's labels: a listed set must be the whole set.
  if (!snapshot.namespaces.empty() && !snapshot.namespaces.contains(pod.namespace_)) {
    errors->Add(InvalidArgumentError(
        fmt::format("{}: metadata.namespace: {} is not among the input's Namespaces", object,
                    Quote(pod.namespace_))));
  }
  CheckTerms(snapshot, pod.pod_affinity, "podAffinity", object, errors);
  CheckTerms(snapshot, pod.pod_anti_affinity, "podAntiAffinity", object, errors);
  CheckSpread(pod, object, errors);
}

}  // namespace qrm::cluster::drain
