// Resolving a container's QoS requirement from its pod's labels, annotations and the role table.
#include "qos/qos_requirement.h"

#include <cmath>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/json_string.h"
#include "common/quote.h"

namespace qrm::qos {
namespace {

constexpr std::pair<std::string_view, QosLevel> kLevels[] = {
    {"shared_cores", QosLevel::kShared},
    {"reclaimed_cores", QosLevel::kReclaimed},
    {"dedicated_cores", QosLevel::kDedicated},
    {"system_cores", QosLevel::kSystem},
};

std::string Find(const std::map<std::string, std::string>& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? std::string() : it->second;
}

Status EnhancementError(const std::string& text, std::string_view why) {
  return InvalidArgumentError(
      fmt::format("annotation \"{}\": invalid value {}: {} (expected a JSON object such as "
                  "{{\"numa_binding\":\"true\",\"numa_exclusive\":\"false\"}})",
                  kMemoryEnhancementKey, Quote(text), why));
}

// memory_enhancement values are strings in katalyst ("true"); booleans are accepted too.
Status ParseMemoryEnhancement(const std::string& text, QosRequirement* out) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) return EnhancementError(text, "not valid JSON");
  if (!doc.IsObject()) return EnhancementError(text, "not a JSON object");
  for (const auto& m : doc.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    bool* field = key == "numa_binding"     ? &out->numa_binding
                  : key == "numa_exclusive" ? &out->numa_exclusive
                                            : nullptr;
    if (field == nullptr) continue;  // katalyst defines other keys (e.g. oom priority)
    if (m.value.IsBool()) {
      *field = m.value.GetBool();
    } else if (m.value.IsString() &&
               (JsonStringView(m.value) == "true" || JsonStringView(m.value) == "false")) {
      *field = JsonStringView(m.value) == "true";
    } else {
      return EnhancementError(text, fmt::format("key \"{}\" must be \"true\" or \"false\"", key));
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view QosLevelName(QosLevel level) {
  for (const auto& [name, l] : kLevels) {
    if (l == level) return name;
  }
  return "unknown";
}

StatusOr<QosLevel> ParseQosLevel(std::string_view name) {
  for (const auto& [n, level] : kLevels) {
    if (n == name) return level;
  }
  return InvalidArgumentError(
      fmt::format("annotation \"{}\": unknown value {} (expected dedicated_cores, shared_cores, "
                  "reclaimed_cores or system_cores)",
                  kQosLevelKey, Quote(name)));
}

std::string PodRoleOf(const std::map<std::string, std::string>& labels,
                      const std::map<std::string, std::string>& annotations) {
  std::string role = Find(labels, kPodRoleLabelKey);
  return role.empty() ? Find(annotations, kPodRoleKey) : role;
}

std::string PodTypeOf(const std::map<std::string, std::string>& annotations) {
  return Find(annotations, kPodTypeKey);
}

StatusOr<QosRequirement> ResolveQos(const std::map<std::string, std::string>& annotations,
                                    const std::string& pod_role, const RoleTable& roles) {
  QosRequirement req;
  std::string role = pod_role.empty() ? Find(annotations, kPodRoleKey) : pod_role;
  if (!role.empty()) {
    const RoleSpec* spec = roles.Find(role);
    if (spec == nullptr) {
      return InvalidArgumentError(
          fmt::format("pod role {} (label \"{}\" or annotation \"{}\") is not in the role "
                      "table (known: {})",
                      Quote(role), kPodRoleLabelKey, kPodRoleKey, [&] {
                        std::string known;
                        for (const auto& [name, _] : roles.roles()) {
                          known += known.empty() ? name : ", " + name;
                        }
                        return known.empty() ? std::string("none configured") : known;
                      }()));
    }
    req.level = spec->level;
    req.numa_binding = spec->numa_binding;
    req.numa_exclusive = spec->numa_exclusive;
    req.role = role;
    req.annotated = true;
    return req;
  }
  if (std::string level = Find(annotations, kQosLevelKey); !level.empty()) {
    QRM_ASSIGN_OR_RETURN(auto parsed, ParseQosLevel(level));
    req.level = parsed;
    req.annotated = true;
  }
  if (std::string enh = Find(annotations, kMemoryEnhancementKey); !enh.empty()) {
    QRM_RETURN_IF_ERROR(ParseMemoryEnhancement(enh, &req));
  }
  if (req.numa_bound() && req.level != QosLevel::kDedicated && req.level != QosLevel::kShared) {
    return InvalidArgumentError(
        fmt::format("annotation \"{}\": NUMA binding is not supported for qos level {} (only "
                    "dedicated_cores and shared_cores)",
                    kMemoryEnhancementKey, QosLevelName(req.level)));
  }
  return req;
}

StatusOr<QosRequirement> ResolveQos(const std::map<std::string, std::string>& labels,
                                    const std::map<std::string, std::string>& annotations,
                                    const RoleTable& roles) {
  return ResolveQos(annotations, PodRoleOf(labels, annotations), roles);
}

StatusOr<QosRequirement> ResolveQos(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                                    const RoleTable& roles) {
  std::map<std::string, std::string> annotations(req.annotations().begin(),
                                                 req.annotations().end());
  if (!req.pod_role().empty()) return ResolveQos(annotations, req.pod_role(), roles);
  std::map<std::string, std::string> labels(req.labels().begin(), req.labels().end());
  return ResolveQos(labels, annotations, roles);
}

StatusOr<double> RequestedQuantity(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                                   const std::string& resource, double max) {
  auto it = req.resource_requests().find(resource);
  if (it == req.resource_requests().end()) {
    return InvalidArgumentError(
        fmt::format("resource_requests: no quantity for resource {}", Quote(resource)));
  }
  const double q = it->second;
  if (!std::isfinite(q) || q < 0 || q > max) {
    return InvalidArgumentError(fmt::format(
        "resource_requests[{}]: invalid quantity {} (expected a finite number from 0 to {})",
        Quote(resource), q, max));
  }
  return q;
}

}  // namespace qrm::qos
