// The replay's report: a table for people, JSON for tools (field names in docs/advisor.md).
#pragma once

#include <string>

#include "advisor/replay/replay.h"

namespace qrm::advisor {

// One line per model: windows, violation rate, mean reclaimable and p99 miss (percent of
// capacity), over all windows and after the warm-up.
std::string ReplayTable(const ReplayResult& result);

// {"machines":N,"steps":N,"models":[{"model":...,"all":{...},"after_warmup":{...}}]} with
// each score as {"windows","missed","violation_rate","mean_reclaimable","miss_p99"} (shares,
// not percent).
std::string ReplayJson(const ReplayResult& result);

}  // namespace qrm::advisor
