// NumaMask: a set of NUMA node ids 0..63, the unit of topology hints.
//
// A value type over one 64-bit word so that merging hints is a handful of
// bitwise instructions. Ordering follows the kubelet's bitmask semantics:
// "narrower" means fewer nodes, and among equally wide masks the one with the
// lower-numbered nodes (the smaller integer value) wins.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace qrm {

class NumaMask {
 public:
  static constexpr int kMaxNodes = 64;

  constexpr NumaMask() = default;
  static constexpr NumaMask FromBits(uint64_t bits) { return NumaMask(bits); }
  // Fails with kInvalidArgument naming the id when one is outside [0, 64).
  static StatusOr<NumaMask> FromNodes(const std::vector<int64_t>& nodes);
  // The mask of nodes [0, count): the "all nodes" mask of a machine with `count` nodes.
  static constexpr NumaMask FirstN(int count) {
    return NumaMask(count >= kMaxNodes ? ~uint64_t{0} : (uint64_t{1} << count) - 1);
  }
  // Parses the Linux list format ("0-1,3"); ids must be below `max_nodes`.
  static StatusOr<NumaMask> Parse(std::string_view text, int max_nodes = kMaxNodes);

  constexpr uint64_t bits() const { return bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr int Count() const { return std::popcount(bits_); }
  constexpr bool Has(int node) const {
    return node >= 0 && node < kMaxNodes && ((bits_ >> node) & 1U);
  }
  constexpr bool IsSubsetOf(NumaMask other) const { return (bits_ & ~other.bits_) == 0; }

  constexpr NumaMask With(int node) const { return NumaMask(bits_ | (uint64_t{1} << node)); }
  constexpr NumaMask And(NumaMask other) const { return NumaMask(bits_ & other.bits_); }
  constexpr NumaMask Or(NumaMask other) const { return NumaMask(bits_ | other.bits_); }

  // Kubelet semantics: fewer nodes is narrower; equal counts compare as integers.
  constexpr bool IsNarrowerThan(NumaMask other) const {
    const int a = Count(), b = other.Count();
    return a != b ? a < b : bits_ < other.bits_;
  }

  std::vector<int> Nodes() const;
  // "0-1,3" (Linux list format); "" for the empty mask.
  std::string ToString() const;

  friend constexpr bool operator==(NumaMask, NumaMask) = default;

 private:
  constexpr explicit NumaMask(uint64_t bits) : bits_(bits) {}
  uint64_t bits_ = 0;
};

}  // namespace qrm
