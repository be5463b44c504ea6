// Writes machine series in qrm's simple trace CSV (docs/trace-formats.md), which ReadTrace
// reads back to the same series: a synthetic trace can be stored, shared and replayed.
#pragma once

#include <ostream>

#include "advisor/trace/machine_series.h"
#include "common/status.h"

namespace qrm::advisor {

// The header line every simple trace written here starts with.
inline constexpr std::string_view kSimpleCsvHeader =
    "time,machine,pod,usage,priority,request,capacity";

// Writes `series`: the header (unless with_header is false: the second and later machines
// of one file), the machine-level rows, then each pod's rows. Numbers are written in their
// shortest form that reads back to the same double. Nothing is written when the series
// cannot be (kInvalidArgument: an id ReadTrace would refuse, a negative or non-finite
// value); kDataLoss when the stream fails.
Status WriteSimpleCsv(std::ostream& out, const MachineSeries& series, bool with_header = true);

}  // namespace qrm::advisor
