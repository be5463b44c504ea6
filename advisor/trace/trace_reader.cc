#include "advisor/trace/trace_reader.h"

#include <array>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "advisor/trace/line_parser.h"
#include "advisor/trace/line_reader.h"

namespace qrm::advisor {

namespace {

constexpr std::array<std::pair<TraceFormat, std::string_view>, 3> kFormatNames = {{
    {TraceFormat::kAlibabaMachine, "alibaba-machine"},
    {TraceFormat::kAlibabaContainer, "alibaba-container"},
    {TraceFormat::kSimple, "simple"},
}};

// StopReading()'s message: with its code it tells the sink's wish apart from an error.
constexpr std::string_view kStopMessage = "stop reading the trace";

}  // namespace

std::string_view TraceFormatName(TraceFormat format) {
  for (const auto& [f, name] : kFormatNames) {
    if (f == format) return name;
  }
  return "simple";
}

StatusOr<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (const auto& [format, format_name] : kFormatNames) {
    if (name == format_name) return format;
  }
  return InvalidArgumentError(fmt::format(
      "trace format: invalid value \"{}\" (alibaba-machine, alibaba-container or simple)", name));
}

Status StopReading() {
  return Status(StatusCode::kCancelled, std::string(kStopMessage));
}

bool IsStopReading(const Status& status) {
  return status.code() == StatusCode::kCancelled && status.message() == kStopMessage;
}

StatusOr<TraceStats> ReadTrace(std::istream& in, TraceFormat format, Resource resource,
                               const std::string& name, const UsageRowSink& sink) {
  using trace_internal::LineOutcome;
  if (in.fail()) {
    return FailedPreconditionError(
        fmt::format("{}: the stream is not readable (was the file opened?)", name));
  }
  const std::unique_ptr<trace_internal::LineParser> parser =
      format == TraceFormat::kSimple ? trace_internal::MakeSimpleParser()
                                     : trace_internal::MakeAlibabaParser(format, resource);
  trace_internal::LineReader lines(in, name, kMaxTraceLineBytes);
  TraceStats stats;
  UsageRow row;  // reused: its strings keep their capacity from row to row
  while (true) {
    QRM_ASSIGN_OR_RETURN(const std::optional<std::string_view> line, lines.Next());
    if (!line) break;
    ++stats.lines;
    const trace_internal::Where where{name, stats.lines};
    QRM_ASSIGN_OR_RETURN(const LineOutcome outcome, parser->Parse(*line, where, row));
    if (outcome == LineOutcome::kSkippedEmpty) ++stats.skipped_empty;
    if (outcome != LineOutcome::kRow) continue;
    ++stats.rows;
    const Status status = sink(row);
    if (IsStopReading(status)) {
      stats.stopped_early = true;
      return stats;
    }
    if (!status.ok()) return status.WithContext(fmt::format("{}:{}", name, stats.lines));
  }
  QRM_RETURN_IF_ERROR(parser->AtEnd(trace_internal::Where{name, stats.lines}));
  return stats;
}

}  // namespace qrm::advisor
