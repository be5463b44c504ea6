#include "qrm/apply/container_update.h"

#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "common/quote.h"
#include "qrm/apply/env_annotation_rules.h"
#include "qrm/apply/property_value.h"

namespace qrm::apply {
namespace {

using ::resourceplugin::v1alpha1::ResourceAllocationInfo;

// Who set an owned property first, and how they spelled it, for conflict messages.
struct Setter {
  std::string resource;
  std::string value;
};

// Adds `resource`'s entries to `merged`. Resources arrive in name order, so whoever set a key
// first is the smallest name and keeps it; `winner` remembers who that was.
void MergeStrings(std::string_view kind, const std::string& resource,
                  const google::protobuf::Map<std::string, std::string>& entries,
                  std::map<std::string, std::string>& merged,
                  std::map<std::string, std::string>& winner, std::vector<std::string>& conflicts) {
  // Protobuf map order is unspecified; sort so `conflicts` comes out the same every time.
  const std::map<std::string, std::string> sorted(entries.begin(), entries.end());
  for (const auto& [key, value] : sorted) {
    auto [it, inserted] = merged.emplace(key, value);
    if (inserted) {
      winner[key] = resource;
    } else if (it->second != value) {
      conflicts.push_back(
          fmt::format("{} {}: resource {} sets {}, resource {} sets {}; using {} from resource {}",
                      kind, Quote(key), Quote(winner[key]), Quote(it->second), Quote(resource),
                      Quote(value), Quote(it->second), Quote(winner[key])));
    }
  }
}

}  // namespace

bool operator==(const ContainerUpdate& a, const ContainerUpdate& b) {
  if (a.owned != b.owned || a.envs != b.envs || a.annotations != b.annotations) return false;
  for (OciProperty p : a.owned) {
    if (OwnedFieldBytes(p, a.resources) != OwnedFieldBytes(p, b.resources)) return false;
  }
  return true;
}

uint64_t Fingerprint(const ContainerUpdate& update) {
  // Length-prefixed pieces, so that no two different updates share an encoding.
  std::string encoded;
  auto add = [&encoded](std::string_view piece) {
    encoded += std::to_string(piece.size());
    encoded += ':';
    encoded += piece;
  };
  for (OciProperty p : update.owned) {
    add(OciPropertyName(p));
    add(OwnedFieldBytes(p, update.resources));
  }
  add("envs");
  for (const auto& [key, value] : update.envs) {
    add(key);
    add(value);
  }
  add("annotations");
  for (const auto& [key, value] : update.annotations) {
    add(key);
    add(value);
  }
  return std::hash<std::string>{}(encoded);
}

StatusOr<ContainerUpdate> BuildContainerUpdate(
    const std::map<std::string, ResourceAllocationInfo>& allocations) {
  ContainerUpdate update;
  std::map<OciProperty, Setter> setters;
  std::map<std::string, std::string> env_winner;
  std::map<std::string, std::string> annotation_winner;
  for (const auto& [resource, info] : allocations) {
    for (const auto& [key, value] : info.envs()) {
      QRM_RETURN_IF_ERROR(CheckEnvVar(resource, key, value));
    }
    for (const auto& [key, value] : info.annotations()) {
      QRM_RETURN_IF_ERROR(CheckAnnotation(resource, key, value));
    }
    MergeStrings("env", resource, info.envs(), update.envs, env_winner, update.conflicts);
    MergeStrings("annotation", resource, info.annotations(), update.annotations, annotation_winner,
                 update.conflicts);

    if (info.oci_property_name().empty()) continue;
    StatusOr<OciProperty> property = ParseOciProperty(info.oci_property_name());
    if (!property.ok()) {
      return property.status().WithContext(fmt::format("resource {}", Quote(resource)));
    }
    const OciProperty p = *property;
    ::runtime::v1::LinuxContainerResources field;
    QRM_RETURN_IF_ERROR(ParsePropertyValue(resource, p, info.allocation_result(), &field));

    auto [setter, first] = setters.emplace(p, Setter{resource, info.allocation_result()});
    if (first) {
      ApplyOwnedField(p, field, &update.resources);
      update.owned.insert(p);
    } else if (OwnedFieldBytes(p, field) != OwnedFieldBytes(p, update.resources)) {
      return InvalidArgumentError(fmt::format(
          "conflicting {} values: resource {} sets {}, resource {} sets {}", OciPropertyName(p),
          Quote(setter->second.resource), Quote(setter->second.value), Quote(resource),
          Quote(info.allocation_result())));
    }
  }
  return update;
}

}  // namespace qrm::apply
