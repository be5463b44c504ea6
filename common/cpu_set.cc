#include "common/cpu_set.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <ostream>

#include <fmt/format.h>

#include "common/id_list.h"

namespace qrm {
namespace {

constexpr int kWordBits = 64;

constexpr std::size_t WordIndex(int id) {
  return static_cast<std::size_t>(id) / kWordBits;
}
constexpr uint64_t BitMask(int id) {
  return uint64_t{1} << (id % kWordBits);
}

}  // namespace

CpuSet::CpuSet(std::initializer_list<int> ids) {
  for (int id : ids) Add(id);
}

StatusOr<CpuSet> CpuSet::FromIds(std::span<const int> ids, int max_cpu_id) {
  CpuSet set;
  for (int id : ids) {
    if (id < 0 || id > max_cpu_id) {
      return InvalidArgumentError(
          fmt::format("cpu id {} is outside the valid range [0, {}]", id, max_cpu_id));
    }
    set.Add(id);
  }
  return set;
}

StatusOr<CpuSet> CpuSet::Parse(std::string_view text, int max_cpu_id) {
  StatusOr<std::vector<IdRange>> ranges = ParseIdList(text, max_cpu_id, "cpu list");
  if (!ranges.ok()) return ranges.status();
  CpuSet set;
  if (!ranges->empty()) set.words_.reserve(WordIndex(ranges->back().last) + 1);
  for (const IdRange& r : *ranges) set.AddRange(r.first, r.last);
  return set;
}

void CpuSet::Add(int id) {
  assert(id >= 0 && "cpu ids are never negative");
  if (id < 0) return;
  const std::size_t w = WordIndex(id);
  if (w >= words_.size()) words_.resize(w + 1, 0);
  words_[w] |= BitMask(id);
}

void CpuSet::AddRange(int first, int last) {
  assert(first >= 0 && "cpu ids are never negative");
  if (first < 0 || last < first) return;
  const std::size_t first_word = WordIndex(first);
  const std::size_t last_word = WordIndex(last);
  if (last_word >= words_.size()) words_.resize(last_word + 1, 0);
  for (std::size_t w = first_word; w <= last_word; ++w) {
    const int lo = w == first_word ? first % kWordBits : 0;
    const int hi = w == last_word ? last % kWordBits : kWordBits - 1;
    // Bits lo..hi inclusive; the width-64 case would be an undefined shift.
    const int width = hi - lo + 1;
    const uint64_t bits = width == kWordBits ? ~uint64_t{0} : ((uint64_t{1} << width) - 1) << lo;
    words_[w] |= bits;
  }
}

void CpuSet::Remove(int id) {
  if (!Contains(id)) return;
  words_[WordIndex(id)] &= ~BitMask(id);
  Trim();
}

bool CpuSet::Contains(int id) const {
  if (id < 0) return false;
  const std::size_t w = WordIndex(id);
  return w < words_.size() && (words_[w] & BitMask(id)) != 0;
}

int CpuSet::Size() const {
  int n = 0;
  for (uint64_t word : words_) n += std::popcount(word);
  return n;
}

std::optional<int> CpuSet::First() const {
  const int id = NextFrom(0);
  if (id < 0) return std::nullopt;
  return id;
}

CpuSet CpuSet::Union(const CpuSet& other) const {
  CpuSet out = words_.size() >= other.words_.size() ? *this : other;
  const CpuSet& smaller = words_.size() >= other.words_.size() ? other : *this;
  for (std::size_t i = 0; i < smaller.words_.size(); ++i) out.words_[i] |= smaller.words_[i];
  return out;
}

CpuSet CpuSet::Intersection(const CpuSet& other) const {
  CpuSet out;
  const std::size_t n = std::min(words_.size(), other.words_.size());
  out.words_.resize(n);
  for (std::size_t i = 0; i < n; ++i) out.words_[i] = words_[i] & other.words_[i];
  out.Trim();
  return out;
}

CpuSet CpuSet::Difference(const CpuSet& other) const {
  CpuSet out = *this;
  const std::size_t n = std::min(words_.size(), other.words_.size());
  for (std::size_t i = 0; i < n; ++i) out.words_[i] &= ~other.words_[i];
  out.Trim();
  return out;
}

bool CpuSet::IsSubsetOf(const CpuSet& other) const {
  if (words_.size() > other.words_.size()) return false;  // our last word is non-zero
  for (std::size_t i = 0; i < words_.size(); ++i) {
    if ((words_[i] & ~other.words_[i]) != 0) return false;
  }
  return true;
}

bool CpuSet::Overlaps(const CpuSet& other) const {
  const std::size_t n = std::min(words_.size(), other.words_.size());
  for (std::size_t i = 0; i < n; ++i) {
    if ((words_[i] & other.words_[i]) != 0) return true;
  }
  return false;
}

std::vector<int> CpuSet::Ids() const {
  std::vector<int> ids;
  ids.reserve(static_cast<std::size_t>(Size()));
  for (int id : *this) ids.push_back(id);
  return ids;
}

std::string CpuSet::ToString() const {
  std::vector<IdRange> ranges;
  for (int id : *this) {
    if (!ranges.empty() && ranges.back().last + 1 == id) {
      ranges.back().last = id;
    } else {
      ranges.push_back({id, id});
    }
  }
  return FormatIdRanges(ranges);
}

CpuSet::const_iterator CpuSet::begin() const {
  return {this, NextFrom(0)};
}

CpuSet::const_iterator& CpuSet::const_iterator::operator++() {
  assert(id_ >= 0 && "incrementing CpuSet::end()");
  id_ = set_->NextFrom(id_ + 1);
  return *this;
}

CpuSet::const_iterator CpuSet::const_iterator::operator++(int) {
  const_iterator old = *this;
  ++*this;
  return old;
}

int CpuSet::NextFrom(int id) const {
  std::size_t w = WordIndex(id);
  if (w >= words_.size()) return -1;
  // Mask off members below `id` in its word, then scan whole words.
  uint64_t word = words_[w] & (~uint64_t{0} << (id % kWordBits));
  while (word == 0) {
    if (++w >= words_.size()) return -1;
    word = words_[w];
  }
  return static_cast<int>(w) * kWordBits + std::countr_zero(word);
}

void CpuSet::Trim() {
  while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

std::ostream& operator<<(std::ostream& os, const CpuSet& set) {
  return os << set.ToString();
}

}  // namespace qrm
