#include "cluster/drain/selector_json.h"

#include <utility>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::cluster::drain {
namespace {

using json::Field;

SelectorOp ParseOp(std::string_view op) {
  if (op == "In") return SelectorOp::kIn;
  if (op == "NotIn") return SelectorOp::kNotIn;
  if (op == "Exists") return SelectorOp::kExists;
  if (op == "DoesNotExist") return SelectorOp::kDoesNotExist;
  if (op == "Gt") return SelectorOp::kGt;
  if (op == "Lt") return SelectorOp::kLt;
  return SelectorOp::kUnknown;
}

// One matchExpressions entry; the operator is checked by Validate, where the context (label
// selector or node selector) says which operators are allowed.
StatusOr<SelectorRequirement> ReadRequirement(const Field& f) {
  SelectorRequirement r;
  QRM_RETURN_IF_ERROR(json::ReadString(f, "key", &r.key));
  QRM_RETURN_IF_ERROR(json::ReadString(f, "operator", &r.op_text));
  r.op = ParseOp(r.op_text);
  QRM_ASSIGN_OR_RETURN(std::optional<Field> values, json::Member(f, "values"));
  if (values) {
    QRM_RETURN_IF_ERROR(json::ForEachItem(*values, [&](const Field& v) -> Status {
      QRM_ASSIGN_OR_RETURN(std::string s, json::String(v));
      r.values.push_back(std::move(s));
      return Status::Ok();
    }));
  }
  return r;
}

std::string_view OpAllowedText(bool node_selector) {
  return node_selector ? "In, NotIn, Exists, DoesNotExist, Gt or Lt"
                       : "In, NotIn, Exists or DoesNotExist";
}

// The checks of metav1.LabelSelector and core/v1 NodeSelectorRequirement validation.
Status CheckRequirement(const SelectorRequirement& r, bool node_selector) {
  bool comparison = r.op == SelectorOp::kGt || r.op == SelectorOp::kLt;
  if (r.op == SelectorOp::kUnknown || (comparison && !node_selector)) {
    return InvalidArgumentError(
        fmt::format("operator: {} is not {}", Quote(r.op_text), OpAllowedText(node_selector)));
  }
  bool set = r.op == SelectorOp::kIn || r.op == SelectorOp::kNotIn;
  if (set && r.values.empty()) {
    return InvalidArgumentError(fmt::format("values: {} needs at least one value", r.op_text));
  }
  if (!set && !comparison && !r.values.empty()) {
    return InvalidArgumentError(fmt::format("values: {} takes no values", r.op_text));
  }
  if (comparison && r.values.size() != 1) {
    return InvalidArgumentError(fmt::format("values: {} takes exactly one value", r.op_text));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ObjectMeta> ReadNamedMeta(const json::Field& item, std::string_view kind,
                                   std::string_view api_version) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, json::ReadTypeAndObjectMeta(item, kind, api_version));
  if (meta.name.empty()) return InvalidArgumentError("metadata.name: missing");
  return meta;
}

Status ReadRequirements(const Field& object, const char* key,
                        std::vector<SelectorRequirement>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> list, json::Member(object, key));
  if (!list) return Status::Ok();
  return json::ForEachItem(*list, [&](const Field& f) -> Status {
    QRM_ASSIGN_OR_RETURN(SelectorRequirement r, ReadRequirement(f));
    out->push_back(std::move(r));
    return Status::Ok();
  });
}

Status ReadNodeSelectorTerms(const Field& object, std::initializer_list<const char*> path,
                             std::vector<NodeSelectorTerm>* out) {
  std::optional<Field> at = object;
  for (const char* key : path) {
    QRM_ASSIGN_OR_RETURN(at, json::Member(*at, key));
    if (!at) return Status::Ok();
  }
  return json::ForEachItem(*at, [&](const Field& f) -> Status {
    NodeSelectorTerm term;
    QRM_RETURN_IF_ERROR(ReadRequirements(f, "matchExpressions", &term.match_expressions));
    out->push_back(std::move(term));
    return Status::Ok();
  });
}

Status ReadLabelSelector(const Field& object, const char* key, std::optional<LabelSelector>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> selector, json::Member(object, key));
  if (!selector) return Status::Ok();
  LabelSelector s;
  QRM_RETURN_IF_ERROR(json::ReadStringMap(*selector, "matchLabels", &s.match_labels));
  QRM_RETURN_IF_ERROR(ReadRequirements(*selector, "matchExpressions", &s.match_expressions));
  *out = std::move(s);
  return Status::Ok();
}

void CheckRequirements(const std::vector<SelectorRequirement>& list, bool node_selector,
                       const std::string& path, ErrorList* errors, const std::string& object) {
  for (size_t i = 0; i < list.size(); ++i) {
    errors->Add(CheckRequirement(list[i], node_selector)
                    .WithContext(fmt::format("{}: {}[{}]", object, path, i)));
  }
}

}  // namespace qrm::cluster::drain
