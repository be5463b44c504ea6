// Koordinator's ResourceVectorizer and ResourceVector (helper.go): the plugin turns every
// resource list into a fixed vector over the sorted names its arguments mention (cpu and
// memory always), and names outside that set are ignored.
//
// Here a vector is a fixed array of kMaxResources slots, slots past the vectorizer's size
// staying zero, so the per-request arithmetic allocates nothing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/loadaware/types.h"
#include "common/status.h"

namespace qrm::cluster::loadaware {

inline constexpr size_t kMaxResources = 8;

using ResourceVector = std::array<int64_t, kMaxResources>;

class Vectorizer {
 public:
  // The names, deduplicated and sorted (NewResourceVectorizer sorts them); at most
  // kMaxResources of them (Validate refuses more).
  explicit Vectorizer(std::vector<std::string> names);

  size_t size() const { return names_.size(); }
  const std::string& name(size_t i) const { return names_[i]; }
  const std::vector<std::string>& names() const { return names_; }
  std::optional<size_t> IndexOf(std::string_view name) const;

  // ToVec / ToFactorVec: the list's values at the vector's names, zero where absent.
  ResourceVector ToVec(const ResourceList& list) const;
  template <typename Map>
  ResourceVector ToFactorVec(const Map& values) const {
    ResourceVector v{};
    for (size_t i = 0; i < names_.size(); ++i) {
      if (auto it = values.find(names_[i]); it != values.end()) v[i] = it->second;
    }
    return v;
  }

  // An error naming `what` and the resource when a vectorized value of `list` is negative or
  // above kMaxQuantity (qrm's input check; Koordinator takes any value).
  Status CheckQuantities(const ResourceList& list, std::string_view what) const;

  // "cpu=1500m memory=2048" for messages.
  std::string Format(const ResourceVector& v) const;

 private:
  std::vector<std::string> names_;
};

// ResourceVector.Empty: every slot zero.
bool IsEmpty(const ResourceVector& v);
// v += y.
void Add(ResourceVector& v, const ResourceVector& y);
// AddDelta: v += max(0, x - y) per slot (y absent: max(0, x)); whether any slot grew.
bool AddDelta(ResourceVector& v, const ResourceVector& x, const ResourceVector* y);

}  // namespace qrm::cluster::loadaware
