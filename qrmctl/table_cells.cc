#include "qrmctl/table_cells.h"

#include <array>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace qrm::ctl {
namespace {

bool CountsBytes(std::string_view resource) {
  return resource == "memory" || resource.starts_with("hugepages-");
}

std::string Bytes(double bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"", "Ki", "Mi", "Gi", "Ti"};
  size_t unit = 0;
  while (unit + 1 < kUnits.size() && bytes >= 1024 && std::fmod(bytes, 1024) == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, kUnits[unit]);
}

}  // namespace

std::string QuantityText(std::string_view resource, double quantity) {
  if (CountsBytes(resource) && quantity >= 0 && std::isfinite(quantity)) return Bytes(quantity);
  return fmt::format("{}", quantity);
}

std::string ResourcesCell(const ::qrm::admin::v1::ContainerAllocation& container) {
  // Protobuf maps iterate in no particular order: sort, so every row reads the same way.
  std::map<std::string, const ::resourceplugin::v1alpha1::ResourceAllocationInfo*> sorted;
  for (const auto& [name, info] : container.resources()) sorted[name] = &info;
  std::string out;
  for (const auto& [name, info] : sorted) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}={}", name, QuantityText(name, info->allocated_quantity()));
    if (info->allocation_result().empty()) continue;
    out += info->oci_property_name().empty()
               ? fmt::format(" ({})", info->allocation_result())
               : fmt::format(" ({} {})", info->oci_property_name(), info->allocation_result());
  }
  // Admitted without these (their plugin was down): pending, or refused by the plugin since.
  std::map<std::string, std::string> skipped(container.skipped_resources().begin(),
                                             container.skipped_resources().end());
  for (const auto& [name, state] : skipped) {
    out += fmt::format("{}{}=skipped({})", out.empty() ? "" : " ", name, state);
  }
  return out.empty() ? "-" : out;
}

std::string ErrorCell(std::string_view error, size_t max_chars) {
  if (error.empty()) return "-";
  std::string line(error);
  for (char& c : line) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (line.size() <= max_chars || max_chars < 4) return line;
  return line.substr(0, max_chars - 3) + "...";
}

}  // namespace qrm::ctl
