// Standard base64 (RFC 4648 section 4, with padding) for binary payloads such as
// serialized protobuf messages: JSON strings must hold text, never raw bytes.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::checkpoint {

std::string Base64Encode(std::string_view bytes);

// Strict: rejects characters outside the alphabet, missing or misplaced padding,
// and non-zero trailing bits, so every byte string has exactly one encoding.
// Errors are kInvalidArgument and name `field` (what was being decoded).
StatusOr<std::string> Base64Decode(std::string_view text, std::string_view field = "base64 value");

}  // namespace qrm::checkpoint
