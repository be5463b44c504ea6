// Builders and Catch2 printers shared by the topology tests.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "qrm/topology/merge.h"
#include "qrm/topology/numa_info.h"

namespace qrm::topology::testing {

inline NumaMask Mask(std::initializer_list<int> nodes) {
  uint64_t bits = 0;
  for (int node : nodes) bits |= uint64_t{1} << node;
  return NumaMask::FromBits(bits);
}

inline TopologyHint Preferred(std::initializer_list<int> nodes) {
  return TopologyHint::Of(Mask(nodes), true);
}
inline TopologyHint NonPreferred(std::initializer_list<int> nodes) {
  return TopologyHint::Of(Mask(nodes), false);
}

inline NumaInfo Machine(std::vector<int> nodes, std::vector<std::vector<uint32_t>> distances = {}) {
  StatusOr<NumaInfo> info = NumaInfo::Create(std::move(nodes), std::move(distances));
  REQUIRE(info.ok());
  return *info;
}

}  // namespace qrm::topology::testing

namespace Catch {
template <>
struct StringMaker<qrm::topology::TopologyHint> {
  static std::string convert(const qrm::topology::TopologyHint& hint) { return hint.ToString(); }
};
template <>
struct StringMaker<qrm::topology::MergeResult> {
  static std::string convert(const qrm::topology::MergeResult& result) {
    return result.best.ToString() + (result.admit ? " admit" : " reject");
  }
};
}  // namespace Catch
