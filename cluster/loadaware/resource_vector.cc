#include "cluster/loadaware/resource_vector.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace qrm::cluster::loadaware {

Vectorizer::Vectorizer(std::vector<std::string> names) : names_(std::move(names)) {
  std::sort(names_.begin(), names_.end());
  names_.erase(std::unique(names_.begin(), names_.end()), names_.end());
  if (names_.size() > kMaxResources) names_.resize(kMaxResources);  // Validate refuses this
}

std::optional<size_t> Vectorizer::IndexOf(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return i;
  }
  return std::nullopt;
}

ResourceVector Vectorizer::ToVec(const ResourceList& list) const {
  return ToFactorVec(list);
}

Status Vectorizer::CheckQuantities(const ResourceList& list, std::string_view what) const {
  for (const std::string& name : names_) {
    auto it = list.find(name);
    if (it == list.end()) continue;
    if (it->second < 0) {
      return InvalidArgumentError(fmt::format("{}: {} is negative ({})", what, name, it->second));
    }
    if (it->second > kMaxQuantity) {
      return InvalidArgumentError(
          fmt::format("{}: {} = {} is absurd (above {})", what, name, it->second, kMaxQuantity));
    }
  }
  return Status::Ok();
}

std::string Vectorizer::Format(const ResourceVector& v) const {
  std::string out;
  for (size_t i = 0; i < names_.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}={}{}", names_[i], v[i], names_[i] == kCpu ? "m" : "");
  }
  return out;
}

bool IsEmpty(const ResourceVector& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

void Add(ResourceVector& v, const ResourceVector& y) {
  for (size_t i = 0; i < kMaxResources; ++i) v[i] += y[i];
}

bool AddDelta(ResourceVector& v, const ResourceVector& x, const ResourceVector* y) {
  bool changed = false;
  for (size_t i = 0; i < kMaxResources; ++i) {
    const int64_t value = y ? x[i] - (*y)[i] : x[i];
    if (value > 0) {
      v[i] += value;
      changed = true;
    }
  }
  return changed;
}

}  // namespace qrm::cluster::loadaware
