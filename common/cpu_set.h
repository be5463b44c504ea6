// CpuSet: a set of logical CPU ids, the currency of every CPU allocation decision.
//
// A value type over a bitset because allocation does many unions, differences and subset
// tests per pod on machines with hundreds to thousands of CPUs; a word per 64 CPUs keeps
// those linear in machine size, not in set size squared. Text form is the kernel's list
// format (see common/id_list.h), so a CpuSet round-trips through cpuset.cpus unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace qrm {

class CpuSet {
 public:
  // Parse/FromIds reject larger ids. 8191 is the largest CONFIG_NR_CPUS a distribution
  // kernel ships (x86_64 MAXSMP), so anything above it is corrupt input, not a big machine.
  static constexpr int kDefaultMaxCpuId = 8191;

  CpuSet() = default;
  // For literals in code and tests. Ids must be >= 0 (asserted; negative ids are ignored in
  // release builds). Use FromIds for ids that come from outside the program.
  CpuSet(std::initializer_list<int> ids);  // NOLINT(google-explicit-constructor)

  // kInvalidArgument naming the id when one is negative or above `max_cpu_id`.
  static StatusOr<CpuSet> FromIds(std::span<const int> ids, int max_cpu_id = kDefaultMaxCpuId);
  // Strict list-format parse ("0-3,8-11"; "" is empty). Text read from sysfs or cgroupfs
  // must go through TrimSysfsValue first. Overlapping elements are accepted as a union.
  static StatusOr<CpuSet> Parse(std::string_view text, int max_cpu_id = kDefaultMaxCpuId);

  // Mutators take trusted ids (>= 0, asserted). Memory grows with the largest id, so ids
  // from outside the program should arrive through Parse/FromIds, which bound them.
  void Add(int id);
  void AddRange(int first, int last);  // inclusive; no-op when last < first
  void Remove(int id);                 // no-op when absent

  bool Contains(int id) const;
  int Size() const;
  bool Empty() const { return words_.empty(); }
  std::optional<int> First() const;

  CpuSet Union(const CpuSet& other) const;
  CpuSet Intersection(const CpuSet& other) const;
  CpuSet Difference(const CpuSet& other) const;  // this minus other
  bool IsSubsetOf(const CpuSet& other) const;    // the empty set is a subset of everything
  bool Overlaps(const CpuSet& other) const;

  std::vector<int> Ids() const;  // ascending
  // Canonical list format: ascending, every run of two or more consecutive ids as a range,
  // exactly as the kernel prints masks ("0-1,4"); "" for the empty set.
  std::string ToString() const;

  // Ascending iteration: `for (int cpu : set)`.
  class const_iterator {
   public:
    using iterator_concept = std::forward_iterator_tag;
    using iterator_category = std::input_iterator_tag;  // yields ids by value
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = int;

    const_iterator() = default;
    int operator*() const { return id_; }
    const_iterator& operator++();
    const_iterator operator++(int);
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.id_ == b.id_;
    }

   private:
    friend class CpuSet;
    const_iterator(const CpuSet* set, int id) : set_(set), id_(id) {}
    const CpuSet* set_ = nullptr;
    int id_ = -1;  // -1 is end()
  };
  const_iterator begin() const;
  const_iterator end() const { return {this, -1}; }

  // Representation invariant (no trailing zero words) makes this set equality.
  friend bool operator==(const CpuSet&, const CpuSet&) = default;

 private:
  int NextFrom(int id) const;  // smallest member >= id, or -1
  void Trim();                 // restores the invariant

  // Bit (id % 64) of words_[id / 64] is CPU id. The last word, if any, is non-zero.
  std::vector<uint64_t> words_;
};

// Prints ToString(); lets test frameworks and logs show sets readably.
std::ostream& operator<<(std::ostream& os, const CpuSet& set);

}  // namespace qrm
