// Fuzzes the usage trace readers (advisor/trace): the Alibaba cluster-trace-v2018 layouts and
// qrm's simple CSV, read row by row and grouped per machine, as `qrm-advisor replay` reads
// files it is given.
//
// Input: the first byte selects the reading, the rest is the file.
//   format       = byte % 3        (alibaba-machine, alibaba-container, simple)
//   resource     = byte / 3 % 2    (cpu, memory)
//   max_machines = byte / 6 % 4    (0: no limit)
// Properties checked beyond "does not crash":
//  * every error of ReadTrace and of the grouping is kInvalidArgument (bad input);
//  * every row has a valid machine id, a pod id that is empty or valid, a time >= 0 and a
//    finite usage >= 0; request and capacity, when given, are finite and >= 0 (capacity > 0);
//    only the simple format gives priority, request or capacity, and never priority or
//    request on a machine-level row;
//  * rows + skipped_empty never exceed the lines read, and the sink saw every counted row;
//  * the grouper delivers each machine once, at most max_machines of them, every series
//    sorted by time, every pod named once; read to the end it delivers every row;
//  * what was read whole writes back with WriteSimpleCsv and reads back to the same series;
//  * every machine goes through the replay (steps, windows, a few models) without an error,
//    every score a share in [0, 1].
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "advisor/replay/trace_replay.h"
#include "advisor/trace/fields.h"
#include "advisor/trace/machine_series.h"
#include "advisor/trace/simple_writer.h"
#include "advisor/trace/trace_reader.h"

namespace {

using qrm::advisor::MachineSeries;
using qrm::advisor::RawSample;
using qrm::advisor::SeriesData;
using qrm::advisor::TraceFormat;
using qrm::advisor::UsageRow;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "trace_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

void CheckBadInput(const qrm::Status& status, const char* what) {
  if (!status.ok() && status.code() != qrm::StatusCode::kInvalidArgument) {
    std::fprintf(stderr, "trace_fuzz: %s: %s\n", what, status.ToString().c_str());
    std::abort();
  }
}

bool Amount(double v) {
  return std::isfinite(v) && v >= 0;
}

void CheckRow(const UsageRow& row, TraceFormat format) {
  using qrm::advisor::trace_internal::IdProblem;
  Check(IdProblem(row.machine) == nullptr, "row with an invalid machine id");
  Check(row.pod.empty() || IdProblem(row.pod) == nullptr, "row with an invalid pod id");
  Check(row.time >= 0, "row with a negative time");
  Check(Amount(row.usage) && !std::signbit(row.usage), "row with a bad usage");
  Check(!row.request || Amount(*row.request), "row with a bad request");
  Check(!row.capacity || (Amount(*row.capacity) && *row.capacity > 0), "row with a bad capacity");
  if (format != TraceFormat::kSimple) {
    Check(!row.priority && !row.request && !row.capacity, "alibaba row with simple-only fields");
  }
  if (row.pod.empty()) Check(!row.priority && !row.request, "machine-level row with pod fields");
  if (format == TraceFormat::kAlibabaMachine) Check(row.pod.empty(), "machine_usage pod row");
}

bool Sorted(const std::vector<RawSample>& samples) {
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].time < samples[i - 1].time) return false;
  }
  return true;
}

// Checks one delivered machine; returns its number of samples.
uint64_t CheckSeries(const MachineSeries& m, std::set<std::string>& machines) {
  Check(machines.insert(m.machine).second, "a machine delivered twice");
  Check(Sorted(m.node), "unsorted node series");
  uint64_t samples = m.node.size();
  std::set<std::string> pods;
  for (const SeriesData& pod : m.pods) {
    Check(!pod.pod.empty() && pods.insert(pod.pod).second, "a pod empty or named twice");
    Check(!pod.samples.empty(), "a pod without samples");
    Check(Sorted(pod.samples), "unsorted pod series");
    samples += pod.samples.size();
  }
  return samples;
}

bool SameSamples(const std::vector<RawSample>& a, const std::vector<RawSample>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].time != b[i].time || a[i].value != b[i].value) return false;
  }
  return true;
}

bool Same(const MachineSeries& a, const MachineSeries& b) {
  if (a.machine != b.machine || a.capacity != b.capacity || !SameSamples(a.node, b.node) ||
      a.pods.size() != b.pods.size()) {
    return false;
  }
  for (size_t i = 0; i < a.pods.size(); ++i) {
    const SeriesData& p = a.pods[i];
    const SeriesData& q = b.pods[i];
    if (p.pod != q.pod || p.priority != q.priority || p.request != q.request ||
        !SameSamples(p.samples, q.samples)) {
      return false;
    }
  }
  return true;
}

// Reads `text` grouped per machine; nullopt-like empty result with ok=false on an error.
struct Grouped {
  qrm::Status status;
  qrm::advisor::TraceStats stats;
  std::vector<MachineSeries> machines;
};

Grouped Group(const std::string& text, TraceFormat format, qrm::advisor::Resource resource,
              size_t max_machines) {
  std::istringstream in(text);
  qrm::advisor::GrouperOptions options;
  options.max_machines = max_machines;
  Grouped g;
  auto stats = qrm::advisor::ReadMachineSeries(in, format, resource, "fuzz.csv", options,
                                               [&](MachineSeries&& m) {
                                                 g.machines.push_back(std::move(m));
                                                 return qrm::Status::Ok();
                                               });
  if (stats.ok()) {
    g.stats = *stats;
  } else {
    g.status = stats.status();
  }
  return g;
}

// Everything read whole goes through the simple writer and back to the same series.
void CheckRoundTrip(const std::vector<MachineSeries>& machines, qrm::advisor::Resource resource) {
  std::ostringstream out;
  for (size_t i = 0; i < machines.size(); ++i) {
    const qrm::Status written = qrm::advisor::WriteSimpleCsv(out, machines[i], i == 0);
    Check(written.ok(), "the simple writer refused what the reader accepted");
  }
  if (machines.empty()) return;
  const Grouped back = Group(out.str(), TraceFormat::kSimple, resource, 0);
  Check(back.status.ok(), "the simple reader refused what the writer wrote");
  Check(back.machines.size() == machines.size(), "round trip changed the machines");
  for (size_t i = 0; i < machines.size(); ++i) {
    Check(Same(machines[i], back.machines[i]), "round trip changed a series");
  }
}

// Every machine through the replay's steps and scoring, with cheap models: whatever times and
// values a trace holds, nothing overflows and the scores stay shares.
void CheckReplay(const std::vector<MachineSeries>& machines) {
  qrm::advisor::ReplayOptions options;
  options.models = {"borg-default", "adaptive", "max:koordinator+nsigma-v2"};
  options.model_options = qrm::advisor::ModelOptions::ForPercent(qrm::advisor::Resource::kCpu);
  options.warmup_s = 600;
  for (const MachineSeries& m : machines) {
    auto result = qrm::advisor::ReplayMachine(m, m.capacity.value_or(100), options);
    Check(result.ok(), "the replay refused a machine the reader accepted");
    for (const qrm::advisor::ModelResult& r : result->models) {
      const double v = r.all.ViolationRate(), reclaim = r.all.MeanReclaimable();
      Check(v >= 0 && v <= 1 && reclaim >= 0 && reclaim <= 1, "a score is not a share");
      Check(r.after_warmup.windows <= r.all.windows, "more warm windows than windows");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const TraceFormat format = static_cast<TraceFormat>(data[0] % 3);
  const auto resource = static_cast<qrm::advisor::Resource>(data[0] / 3 % 2);
  const size_t max_machines = data[0] / 6 % 4;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);

  std::istringstream in(text);
  uint64_t seen = 0;
  auto stats = qrm::advisor::ReadTrace(in, format, resource, "fuzz.csv", [&](const UsageRow& row) {
    CheckRow(row, format);
    ++seen;
    return qrm::Status::Ok();
  });
  CheckBadInput(stats.status(), "ReadTrace");
  if (stats.ok()) {
    Check(stats->rows == seen, "rows counted differ from rows delivered");
    Check(stats->rows + stats->skipped_empty <= stats->lines, "more rows than lines");
    Check(!stats->stopped_early, "stopped early without being asked");
  }

  const Grouped grouped = Group(text, format, resource, max_machines);
  CheckBadInput(grouped.status, "ReadMachineSeries");
  std::set<std::string> machines;
  uint64_t samples = 0;
  for (const MachineSeries& m : grouped.machines) samples += CheckSeries(m, machines);
  Check(max_machines == 0 || grouped.machines.size() <= max_machines, "too many machines");
  if (grouped.status.ok() && !grouped.stats.stopped_early) {
    Check(stats.ok() && samples == stats->rows, "the grouper lost or invented rows");
    CheckRoundTrip(grouped.machines, resource);
  }
  CheckReplay(grouped.machines);
  return 0;
}
