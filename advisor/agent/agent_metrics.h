// The advisor's Prometheus metrics, rendered from the agent's state at scrape time (so the
// sampling loop pays nothing for them): samples, skipped cgroups, counter resets,
// predictions, pool decisions. Checkpoint writes are added by their owner.
#pragma once

#include <string>

#include "advisor/agent/agent.h"

namespace qrm::advisor {

// Appends the metric families (# HELP, # TYPE and samples) to `out`.
void AppendAgentMetrics(const Agent& agent, std::string& out);

}  // namespace qrm::advisor
