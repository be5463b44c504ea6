// Kubernetes resource quantities in annotation values ("1.5", "1500m", "512Mi", "2G").
#pragma once

#include <string_view>

#include "common/status.h"

namespace qrm::shim {

// Parses a Kubernetes quantity into a plain number: a decimal number (optionally with an
// exponent, "1e3") followed by at most one suffix: "m" (1/1000), decimal "k" "M" "G" "T"
// "P" "E", or binary "Ki" "Mi" "Gi" "Ti" "Pi" "Ei". Negative, non-finite or malformed
// values are kInvalidArgument "<what>=\"<value>\": <reason>", so `what` names the source
// ("pod annotation qrm.io/cpu-request").
StatusOr<double> ParseQuantity(std::string_view what, std::string_view value);

}  // namespace qrm::shim
