#include "checkpoint/checksum.h"

#include <fmt/format.h>

namespace qrm::checkpoint {

uint64_t Fnv1a64(std::string_view bytes) {
  constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t hash = kOffsetBasis;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= kPrime;
  }
  return hash;
}

std::string FormatChecksum(std::string_view canonical_bytes) {
  return fmt::format("fnv1a64:{:016x}", Fnv1a64(canonical_bytes));
}

}  // namespace qrm::checkpoint
