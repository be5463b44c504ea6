// OciProperty: the LinuxContainerResources fields a resource plugin may claim through
// ResourceAllocationInfo.oci_property_name.
//
// Plugins name the field by its Go name in the CRI API (the kubelet's plugin protocol was
// written against the Go structs), so "CpusetCpus" means LinuxContainerResources.cpuset_cpus.
#pragma once

#include <array>
#include <string_view>

#include "common/status.h"

namespace qrm::apply {

enum class OciProperty {
  kCpuPeriod,
  kCpuQuota,
  kCpuShares,
  kMemoryLimitInBytes,
  kOomScoreAdj,
  kCpusetCpus,
  kCpusetMems,
  kHugepageLimits,
  kUnified,
  kMemorySwapLimitInBytes,
};

inline constexpr std::array<OciProperty, 10> kAllOciProperties = {
    OciProperty::kCpuPeriod,   OciProperty::kCpuQuota,
    OciProperty::kCpuShares,   OciProperty::kMemoryLimitInBytes,
    OciProperty::kOomScoreAdj, OciProperty::kCpusetCpus,
    OciProperty::kCpusetMems,  OciProperty::kHugepageLimits,
    OciProperty::kUnified,     OciProperty::kMemorySwapLimitInBytes,
};

// Exact, case-sensitive match on the Go field name ("CpusetCpus"). Anything else is
// kInvalidArgument naming the value and listing the known names.
StatusOr<OciProperty> ParseOciProperty(std::string_view name);

// The Go field name, as plugins send it.
std::string_view OciPropertyName(OciProperty p);

}  // namespace qrm::apply
