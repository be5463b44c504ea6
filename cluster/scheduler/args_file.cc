#include "cluster/scheduler/args_file.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <functional>
#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cluster/kube/kube_yaml.h"
#include "cluster/objects/meta_time.h"
#include "cluster/scheduler/args_document.h"
#include "common/quote.h"

namespace qrm::cluster::scheduler {
namespace {

namespace la = loadaware;
using kube::DocNode;

constexpr std::string_view kKind = "LoadAwareSchedulingArgs";
constexpr std::string_view kApiVersions[] = {"kubescheduler.config.k8s.io/v1",
                                             "kubescheduler.config.k8s.io/v1beta3"};

// "line L: field: message"; JSON nodes have no line, and the field path alone says where.
Status FieldError(const DocNode& node, std::string_view field, std::string_view message) {
  if (node.line <= 0) return InvalidArgumentError(fmt::format("{}: {}", field, message));
  return InvalidArgumentError(fmt::format("line {}: {}: {}", node.line, field, message));
}

std::string Shown(const DocNode& node) {
  return node.kind == DocNode::Kind::kScalar ? Quote(node.scalar)
                                             : std::string(kube::KindName(node.kind));
}

bool IsNull(const DocNode& node) {
  return node.kind == DocNode::Kind::kNull;
}

// A plain YAML scalar (or a JSON number or boolean), not a quoted string.
bool IsPlain(const DocNode& node) {
  return node.kind == DocNode::Kind::kScalar && !node.quoted;
}

bool LooksTyped(const DocNode& node) {
  if (!IsPlain(node)) return false;
  const std::string& s = node.scalar;
  if (s == "true" || s == "false" || s == "True" || s == "False" || s == "TRUE" || s == "FALSE") {
    return true;
  }
  // A YAML number (what sigs.k8s.io/yaml would turn into a JSON number): digits, with a sign,
  // a point or an exponent.
  if (s.empty()) return false;
  const size_t digits = s.find_first_of("0123456789");
  return digits != std::string::npos && s.find_first_not_of("+-.0123456789eE") == std::string::npos;
}

Status ReadBool(const DocNode& node, std::string_view field, bool& out) {
  const std::string& s = node.scalar;
  if (IsPlain(node) && (s == "true" || s == "True" || s == "TRUE")) {
    out = true;
  } else if (IsPlain(node) && (s == "false" || s == "False" || s == "FALSE")) {
    out = false;
  } else {
    return FieldError(node, field, "expected true or false, got " + Shown(node));
  }
  return Status::Ok();
}

Status ReadInt(const DocNode& node, std::string_view field, int64_t& out) {
  const std::string& s = node.scalar;
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (!IsPlain(node) || s.empty() || ec != std::errc() || ptr != end) {
    return FieldError(node, field, "expected an integer, got " + Shown(node));
  }
  return Status::Ok();
}

Status ReadString(const DocNode& node, std::string_view field, std::string& out) {
  if (node.kind != DocNode::Kind::kScalar || LooksTyped(node)) {
    return FieldError(node, field, "expected a string, got " + Shown(node));
  }
  out = node.scalar;
  return Status::Ok();
}

// metav1.Duration ("5m", "1h30m"), in whole seconds.
Status ReadDuration(const DocNode& node, std::string_view field, std::chrono::seconds& out) {
  std::string text;
  QRM_RETURN_IF_ERROR(ReadString(node, field, text));
  StatusOr<int64_t> ns = ParseDuration(text);
  if (!ns.ok()) return FieldError(node, field, ns.status().message());
  if (*ns % kNanosPerSecond != 0) {
    return FieldError(node, field, Quote(text) + " is not a whole number of seconds");
  }
  out = std::chrono::seconds(*ns / kNanosPerSecond);
  return Status::Ok();
}

Status ReadFactors(const DocNode& node, std::string_view field, la::ResourceFactors& out) {
  out.clear();
  if (IsNull(node)) return Status::Ok();
  if (node.kind != DocNode::Kind::kMap) {
    return FieldError(node, field, "expected a mapping of resource names, got " + Shown(node));
  }
  for (const kube::DocEntry& e : node.entries) {
    const std::string name = fmt::format("{}.{}", field, e.key);
    QRM_RETURN_IF_ERROR(ReadInt(e.value, name, out[e.key]));
  }
  return Status::Ok();
}

Status ReadNames(const DocNode& node, std::string_view field, std::vector<std::string>& out) {
  out.clear();
  if (IsNull(node)) return Status::Ok();
  if (node.kind != DocNode::Kind::kSeq) {
    return FieldError(node, field, "expected a list of resource names, got " + Shown(node));
  }
  for (size_t i = 0; i < node.items.size(); ++i) {
    QRM_RETURN_IF_ERROR(
        ReadString(node.items[i], fmt::format("{}[{}]", field, i), out.emplace_back()));
  }
  return Status::Ok();
}

template <typename T, typename Read>
Status ReadOptional(const DocNode& node, std::string_view field, std::optional<T>& out,
                    Read&& read) {
  if (IsNull(node)) {
    out.reset();
    return Status::Ok();
  }
  T value{};
  QRM_RETURN_IF_ERROR(read(node, field, value));
  out = value;
  return Status::Ok();
}

// One field of a struct: its name and how it is read from its value.
struct Field {
  std::string_view name;
  std::function<Status(const DocNode&, std::string_view)> read;
};

// A mapping read field by field; every key must be a field.
Status ReadStruct(const DocNode& node, std::string_view what, std::string_view prefix,
                  const std::vector<Field>& fields) {
  if (IsNull(node)) return Status::Ok();
  if (node.kind != DocNode::Kind::kMap) {
    return FieldError(node, what, "expected a mapping, got " + Shown(node));
  }
  for (const kube::DocEntry& e : node.entries) {
    const std::string name = std::string(prefix) + e.key;
    auto it =
        std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == e.key; });
    if (it == fields.end()) {
      return FieldError(e.value, name, fmt::format("unknown field of {}", what));
    }
    QRM_RETURN_IF_ERROR(it->read(e.value, name));
  }
  return Status::Ok();
}

Status ReadAggregated(const DocNode& node, std::string_view, la::AggregatedArgs& a) {
  const std::vector<Field> fields = {
      {"usageThresholds", [&](auto& n, auto f) { return ReadFactors(n, f, a.usage_thresholds); }},
      {"usageAggregationType",
       [&](auto& n, auto f) { return ReadString(n, f, a.usage_aggregation_type); }},
      {"usageAggregatedDuration",
       [&](auto& n, auto f) { return ReadDuration(n, f, a.usage_aggregated_duration); }},
      {"scoreAggregationType",
       [&](auto& n, auto f) { return ReadString(n, f, a.score_aggregation_type); }},
      {"scoreAggregatedDuration",
       [&](auto& n, auto f) { return ReadDuration(n, f, a.score_aggregated_duration); }},
  };
  return ReadStruct(node, "aggregated", "aggregated.", fields);
}

Status CheckTypeMeta(const DocNode& node, std::string_view field, std::string& out) {
  QRM_RETURN_IF_ERROR(ReadString(node, field, out));
  if (field == "kind" && out != kKind) {
    return FieldError(node, field, fmt::format("{} is not {}", Quote(out), kKind));
  }
  if (field == "apiVersion" &&
      std::find(std::begin(kApiVersions), std::end(kApiVersions), out) == std::end(kApiVersions)) {
    return FieldError(
        node, field,
        fmt::format("{} is not {} or {}", Quote(out), kApiVersions[0], kApiVersions[1]));
  }
  return Status::Ok();
}

std::vector<Field> ArgsFields(la::LoadAwareArgs& a, std::string& type_meta) {
  return {
      {"apiVersion", [&](auto& n, auto f) { return CheckTypeMeta(n, f, type_meta); }},
      {"kind", [&](auto& n, auto f) { return CheckTypeMeta(n, f, type_meta); }},
      {"filterExpiredNodeMetrics",
       [&](auto& n, auto f) {
         return ReadOptional(n, f, a.filter_expired_node_metrics, ReadBool);
       }},
      {"nodeMetricExpirationSeconds",
       [&](auto& n, auto f) {
         return ReadOptional(n, f, a.node_metric_expiration_seconds, ReadInt);
       }},
      {"enableScheduleWhenNodeMetricsExpired",
       [&](auto& n, auto f) {
         return ReadOptional(n, f, a.enable_schedule_when_node_metrics_expired, ReadBool);
       }},
      {"resourceWeights", [&](auto& n, auto f) { return ReadFactors(n, f, a.resource_weights); }},
      {"dominantResourceWeight",
       [&](auto& n, auto f) {
         return IsNull(n) ? Status::Ok() : ReadInt(n, f, a.dominant_resource_weight);
       }},
      {"usageThresholds", [&](auto& n, auto f) { return ReadFactors(n, f, a.usage_thresholds); }},
      {"prodUsageThresholds",
       [&](auto& n, auto f) { return ReadFactors(n, f, a.prod_usage_thresholds); }},
      {"prodUsageIncludeSys",
       [&](auto& n, auto f) {
         return IsNull(n) ? Status::Ok() : ReadBool(n, f, a.prod_usage_include_sys);
       }},
      {"scoreAccordingProdUsage",
       [&](auto& n, auto f) {
         return IsNull(n) ? Status::Ok() : ReadBool(n, f, a.score_according_prod_usage);
       }},
      {"estimator",
       [&](auto& n, auto f) { return IsNull(n) ? Status::Ok() : ReadString(n, f, a.estimator); }},
      {"estimatedScalingFactors",
       [&](auto& n, auto f) { return ReadFactors(n, f, a.estimated_scaling_factors); }},
      {"estimatedSecondsAfterPodScheduled",
       [&](auto& n, auto f) {
         return ReadOptional(n, f, a.estimated_seconds_after_pod_scheduled, ReadInt);
       }},
      {"estimatedSecondsAfterInitialized",
       [&](auto& n, auto f) {
         return ReadOptional(n, f, a.estimated_seconds_after_initialized, ReadInt);
       }},
      {"allowCustomizeEstimation",
       [&](auto& n, auto f) {
         return IsNull(n) ? Status::Ok() : ReadBool(n, f, a.allow_customize_estimation);
       }},
      {"aggregated",
       [&](auto& n, auto f) { return ReadOptional(n, f, a.aggregated, ReadAggregated); }},
      {"supportedResources",
       [&](auto& n, auto f) { return ReadNames(n, f, a.supported_resources); }},
  };
}

}  // namespace

StatusOr<la::LoadAwareArgs> ParseLoadAwareArgs(std::string_view text) {
  StatusOr<DocNode> doc = ParseArgsDocument(text);
  if (!doc.ok()) return doc.status();
  la::LoadAwareArgs args;
  std::string type_meta;
  QRM_RETURN_IF_ERROR(ReadStruct(*doc, kKind, "", ArgsFields(args, type_meta)));
  la::SetDefaults(args);
  if (Status s = la::Validate(args); !s.ok()) return s;
  return args;
}

StatusOr<la::LoadAwareArgs> ReadLoadAwareArgsFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError(errno, "open", path);
  std::ostringstream text;
  text << in.rdbuf();
  StatusOr<la::LoadAwareArgs> args = ParseLoadAwareArgs(text.str());
  if (!args.ok()) return args.status().WithContext(path);
  return args;
}

}  // namespace qrm::cluster::scheduler
