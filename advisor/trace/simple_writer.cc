#include "advisor/trace/simple_writer.h"

#include <cmath>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "advisor/trace/fields.h"
#include "common/quote.h"

namespace qrm::advisor {

namespace {

// Bytes buffered before they go to the stream.
constexpr std::size_t kFlushBytes = 64 * 1024;

bool Writable(double value) {
  return std::isfinite(value) && value >= 0;
}

Status Unwritable(std::string_view what, std::string_view value, std::string_view expected) {
  return InvalidArgumentError(
      fmt::format("simple trace: {}: invalid value {} ({})", what, value, expected));
}

Status CheckSamples(std::string_view what, const std::vector<RawSample>& samples) {
  for (const RawSample& s : samples) {
    if (s.time < 0) return Unwritable(what, fmt::format("time {}", s.time), "time >= 0");
    if (!Writable(s.value)) {
      return Unwritable(what, fmt::format("usage {} at {}", s.value, s.time), "usage >= 0");
    }
  }
  return Status::Ok();
}

// Everything ReadTrace would refuse, checked before the first byte is written.
Status CheckSeries(const MachineSeries& series) {
  if (const char* problem = trace_internal::IdProblem(series.machine)) {
    return Unwritable("machine", Quote(series.machine), problem);
  }
  if (series.capacity && !(Writable(*series.capacity) && *series.capacity > 0)) {
    return Unwritable("capacity", fmt::format("{}", *series.capacity), "a number > 0");
  }
  QRM_RETURN_IF_ERROR(CheckSamples(fmt::format("machine {}", series.machine), series.node));
  for (const SeriesData& pod : series.pods) {
    if (const char* problem = trace_internal::IdProblem(pod.pod)) {
      return Unwritable("pod", Quote(pod.pod), problem);
    }
    if (pod.request && !Writable(*pod.request)) {
      return Unwritable(fmt::format("pod {}: request", pod.pod), fmt::format("{}", *pod.request),
                        "a number >= 0");
    }
    QRM_RETURN_IF_ERROR(CheckSamples(fmt::format("pod {}", pod.pod), pod.samples));
  }
  return Status::Ok();
}

// Writes the buffer out when it is full (or always, with `force`).
Status Flush(std::ostream& out, fmt::memory_buffer& buffer, bool force) {
  if (!force && buffer.size() < kFlushBytes) return Status::Ok();
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  buffer.clear();
  if (!out) return DataLossError("simple trace: write failed");
  return Status::Ok();
}

// "<capacity>" or "" when the machine's is unknown.
std::string CapacityField(const MachineSeries& series) {
  return series.capacity ? fmt::format("{}", *series.capacity) : std::string();
}

}  // namespace

Status WriteSimpleCsv(std::ostream& out, const MachineSeries& series, bool with_header) {
  QRM_RETURN_IF_ERROR(CheckSeries(series));
  fmt::memory_buffer buffer;
  if (with_header) fmt::format_to(std::back_inserter(buffer), "{}\n", kSimpleCsvHeader);
  const std::string capacity = CapacityField(series);
  for (const RawSample& s : series.node) {
    fmt::format_to(std::back_inserter(buffer), "{},{},,{},,,{}\n", s.time, series.machine, s.value,
                   capacity);
    QRM_RETURN_IF_ERROR(Flush(out, buffer, false));
  }
  for (const SeriesData& pod : series.pods) {
    const std::string_view priority = pod.priority ? PriorityClassName(*pod.priority) : "";
    const std::string request = pod.request ? fmt::format("{}", *pod.request) : std::string();
    for (const RawSample& s : pod.samples) {
      fmt::format_to(std::back_inserter(buffer), "{},{},{},{},{},{},{}\n", s.time, series.machine,
                     pod.pod, s.value, priority, request, capacity);
      QRM_RETURN_IF_ERROR(Flush(out, buffer, false));
    }
  }
  return Flush(out, buffer, true);
}

}  // namespace qrm::advisor
