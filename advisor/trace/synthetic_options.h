// The checks GenerateSynthetic makes on its options before drawing anything.
#pragma once

#include "advisor/trace/synthetic.h"
#include "common/status.h"

namespace qrm::advisor::trace_internal {

// kInvalidArgument naming the option and its value, for anything the model cannot honour.
Status ValidateSyntheticOptions(const SyntheticOptions& options);

}  // namespace qrm::advisor::trace_internal
