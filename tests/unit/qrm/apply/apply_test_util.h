// Builders shared by the qrm/apply tests.
#pragma once

#include <map>
#include <string>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/status.h"
#include "qrm/apply/container_update.h"

namespace qrm::apply::testing {

using Allocations = std::map<std::string, ::resourceplugin::v1alpha1::ResourceAllocationInfo>;
using Strings = std::map<std::string, std::string>;

inline ::resourceplugin::v1alpha1::ResourceAllocationInfo Alloc(const std::string& property,
                                                                const std::string& value,
                                                                const Strings& envs = {},
                                                                const Strings& annotations = {}) {
  ::resourceplugin::v1alpha1::ResourceAllocationInfo info;
  info.set_oci_property_name(property);
  info.set_allocation_result(value);
  for (const auto& [k, v] : envs) (*info.mutable_envs())[k] = v;
  for (const auto& [k, v] : annotations) (*info.mutable_annotations())[k] = v;
  return info;
}

// One resource "res" setting one property.
inline StatusOr<ContainerUpdate> BuildOne(const std::string& property, const std::string& value) {
  return BuildContainerUpdate({{"res", Alloc(property, value)}});
}

}  // namespace qrm::apply::testing
