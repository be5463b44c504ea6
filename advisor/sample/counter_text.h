// The one parser of the counters the kernel writes as text (cgroup control files, /proc
// fields): a whole unsigned decimal, trailing newline and spaces ignored.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace qrm::advisor {

// kDataLoss "<where>: invalid value "<text>" (a counter)" for anything else.
StatusOr<uint64_t> ParseCounter(std::string_view text, std::string_view where);

}  // namespace qrm::advisor
