// Streaming readers of usage traces (docs/trace-formats.md): a file is read one line at a
// time and each usage row goes to a sink, so a trace of many gigabytes never sits in memory.
//
// Three layouts: the Alibaba cluster-trace-v2018 machine_usage.csv and container_usage.csv,
// and qrm's own simple CSV (what WriteSimpleCsv writes). Rows whose usage field is empty
// (the Alibaba files have many) are skipped and counted; anything else that is not as the
// layout says is a kInvalidArgument error naming the file, the line, the field and the value:
//   machine_usage.csv:12: cpu_util_percent: invalid value "abc" (a number >= 0)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include "advisor/usage/usage.h"
#include "common/status.h"

namespace qrm::advisor {

// One usage sample of a machine or of one pod on it, in the trace's own unit (the Alibaba
// files hold percent of the machine).
struct UsageRow {
  std::string machine;
  std::string pod;   // empty: a machine-level row
  int64_t time = 0;  // seconds
  double usage = 0;  // finite, >= 0
  // Only the simple format carries these; they are empty when the row does not say.
  std::optional<PriorityClass> priority;  // the pod's (never on a machine-level row)
  std::optional<double> request;          // the pod's (never on a machine-level row)
  std::optional<double> capacity;         // the machine's
};

enum class TraceFormat { kAlibabaMachine, kAlibabaContainer, kSimple };

std::string_view TraceFormatName(TraceFormat format);  // "alibaba-machine", ...
StatusOr<TraceFormat> ParseTraceFormat(std::string_view name);

struct TraceStats {
  uint64_t lines = 0;          // lines read (blank and comment lines included)
  uint64_t rows = 0;           // rows handed to the sink
  uint64_t skipped_empty = 0;  // rows skipped because their usage field was empty
  bool stopped_early = false;  // the sink returned StopReading()
};

// Longest line accepted, without its line ending. The longest real Alibaba row is under
// 100 bytes: a longer line means the file is not a trace (or has no line endings at all),
// and reading it whole could take all memory.
inline constexpr std::size_t kMaxTraceLineBytes = 64 * 1024;

// Latest time a trace may hold (2^40 s): the replay adds steps, windows and warm-ups to
// trace times, which must not overflow.
inline constexpr int64_t kMaxTraceSeconds = int64_t{1} << 40;

// A sink returns StopReading() to end ReadTrace early without an error (MachineGrouper does
// once it has delivered the machines asked for).
Status StopReading();
bool IsStopReading(const Status& status);

using UsageRowSink = std::function<Status(const UsageRow&)>;

// Reads `in` to its end (or until the sink returns StopReading()), handing every usage row of
// `resource` to `sink`. `name` is the file's name for messages. A sink error stops the read
// and is returned with the file and line as context ("trace.csv:7: <sink's message>"), its
// code unchanged. Errors: kInvalidArgument for anything malformed in the file,
// kFailedPrecondition for a stream that is not readable, kDataLoss for a read failure.
StatusOr<TraceStats> ReadTrace(std::istream& in, TraceFormat format, Resource resource,
                               const std::string& name, const UsageRowSink& sink);

}  // namespace qrm::advisor
