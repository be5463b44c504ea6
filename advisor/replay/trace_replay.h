// A whole trace through the replay: read (streaming), grouped per machine, each machine's
// steps formed and replayed, the scores merged. What `qrm-advisor replay` and the REPLAY
// bench run.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <set>
#include <string>

#include "advisor/replay/replay.h"
#include "advisor/trace/trace_reader.h"

namespace qrm::advisor {

struct TraceReplayOptions {
  TraceFormat format = TraceFormat::kSimple;
  Resource resource = Resource::kCpu;
  std::string name = "trace.csv";  // for messages
  std::set<std::string> machines;  // only these (empty: all)
  size_t max_machines = 0;         // 0: no limit
  // The machines' capacity when the trace does not give it. The Alibaba layouts hold percent
  // of the machine: 100 unless set.
  std::optional<double> capacity;
  ReplayOptions replay;
};

struct TraceReplayResult {
  ReplayResult replay;
  TraceStats stats;
};

StatusOr<TraceReplayResult> ReplayTrace(std::istream& in, const TraceReplayOptions& options);

// The replay of one machine already in memory (the synthetic generator's output).
StatusOr<ReplayResult> ReplayMachine(const MachineSeries& machine, double capacity,
                                     const ReplayOptions& options);

}  // namespace qrm::advisor
