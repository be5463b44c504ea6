// The checkpoint checksum: FNV-1a 64 over the canonical bytes of `data`.
//
// Chosen because any language can reproduce it in three lines (no table, no
// library), and because each FNV-1a step is a bijection of the running state:
// a change confined to a single byte is always detected.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace qrm::checkpoint {

uint64_t Fnv1a64(std::string_view bytes);

// "fnv1a64:" followed by 16 lowercase hex digits; the algorithm prefix lets a
// later version change the function without guessing.
std::string FormatChecksum(std::string_view canonical_bytes);

}  // namespace qrm::checkpoint
