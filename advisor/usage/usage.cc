#include "advisor/usage/usage.h"

#include <algorithm>

#include <fmt/format.h>

namespace qrm::advisor {

std::string_view ResourceName(Resource r) {
  return r == Resource::kCpu ? "cpu" : "memory";
}

StatusOr<Resource> ParseResource(std::string_view name) {
  if (name == "cpu") return Resource::kCpu;
  if (name == "memory") return Resource::kMemory;
  return InvalidArgumentError(fmt::format("resource: invalid value \"{}\" (cpu or memory)", name));
}

std::string_view PriorityClassName(PriorityClass c) {
  switch (c) {
    case PriorityClass::kProd: return "prod";
    case PriorityClass::kMid: return "mid";
    case PriorityClass::kBatch: return "batch";
    case PriorityClass::kFree: return "free";
  }
  return "prod";
}

StatusOr<PriorityClass> ParsePriorityClass(std::string_view name) {
  for (PriorityClass c :
       {PriorityClass::kProd, PriorityClass::kMid, PriorityClass::kBatch, PriorityClass::kFree}) {
    if (name == PriorityClassName(c)) return c;
  }
  return InvalidArgumentError(
      fmt::format("priority class: invalid value \"{}\" (prod, mid, batch or free)", name));
}

double Observation::PodsUsage() const {
  double sum = 0;
  for (const PodUsage& p : pods) sum += p.usage;
  return sum;
}

double Observation::System() const {
  return std::max(node - PodsUsage(), 0.0);
}

}  // namespace qrm::advisor
