// Reading a trace held in a string, for the trace tests.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "advisor/trace/trace_reader.h"

namespace qrm::advisor::testing {

struct ReadResult {
  Status status;
  TraceStats stats;
  std::vector<UsageRow> rows;
};

inline ReadResult ReadText(const std::string& text, TraceFormat format,
                           Resource resource = Resource::kCpu,
                           const std::string& name = "trace.csv") {
  std::istringstream in(text);
  ReadResult result;
  StatusOr<TraceStats> stats = ReadTrace(in, format, resource, name, [&](const UsageRow& row) {
    result.rows.push_back(row);
    return Status::Ok();
  });
  if (stats.ok()) {
    result.stats = *stats;
  } else {
    result.status = stats.status();
  }
  return result;
}

}  // namespace qrm::advisor::testing
