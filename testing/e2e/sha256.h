// SHA-256 for OCI digests (FIPS 180-4), so the e2e harness needs no crypto library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::e2e {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  void Update(std::string_view data) { Update(data.data(), data.size()); }
  // Lower-case hex of the 32-byte digest; the object must not be updated afterwards.
  std::string HexDigest();

 private:
  void Block(const uint8_t* block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string Sha256Hex(std::string_view data);
StatusOr<std::string> Sha256FileHex(const std::string& path);

}  // namespace qrm::e2e
