#include "qrm/apply/oci_property.h"

#include <string>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::apply {

std::string_view OciPropertyName(OciProperty p) {
  switch (p) {
    case OciProperty::kCpuPeriod: return "CpuPeriod";
    case OciProperty::kCpuQuota: return "CpuQuota";
    case OciProperty::kCpuShares: return "CpuShares";
    case OciProperty::kMemoryLimitInBytes: return "MemoryLimitInBytes";
    case OciProperty::kOomScoreAdj: return "OomScoreAdj";
    case OciProperty::kCpusetCpus: return "CpusetCpus";
    case OciProperty::kCpusetMems: return "CpusetMems";
    case OciProperty::kHugepageLimits: return "HugepageLimits";
    case OciProperty::kUnified: return "Unified";
    case OciProperty::kMemorySwapLimitInBytes: return "MemorySwapLimitInBytes";
  }
  return "Unknown";
}

StatusOr<OciProperty> ParseOciProperty(std::string_view name) {
  std::string known;
  for (OciProperty p : kAllOciProperties) {
    if (OciPropertyName(p) == name) return p;
    if (!known.empty()) known += ", ";
    known += OciPropertyName(p);
  }
  return InvalidArgumentError(
      fmt::format("unknown oci_property_name {} (known: {})", Quote(name), known));
}

}  // namespace qrm::apply
