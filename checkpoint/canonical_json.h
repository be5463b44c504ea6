// Canonical JSON: the byte form of a checkpoint's `data` that the checksum covers.
//
// The definition is chosen so that any language can reproduce it; in Python it
// is exactly
//   json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
// That is: no whitespace; object members sorted by key (bytewise UTF-8, which is
// code-point order); strings escape only '"', '\\' and control characters
// (\b \f \n \r \t, the rest as \u00xx in lowercase hex); integers in decimal.
// Floating-point numbers are refused because their shortest text differs
// between languages: store quantities as integers (milli-units, bytes) or strings.
#pragma once

#include <string>

#include <rapidjson/document.h>

#include "common/status.h"

namespace qrm::checkpoint {

// Fails with kInvalidArgument naming the JSON path (e.g. "data.pods[3].cpu")
// for a floating-point number, a duplicate object key or a string that is not
// valid UTF-8.
StatusOr<std::string> CanonicalJson(const rapidjson::Value& value);

}  // namespace qrm::checkpoint
