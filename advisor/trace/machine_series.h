// From a stream of usage rows to one machine's series at a time: a trace sorted by machine
// is grouped while it is read, so memory holds one machine, never the whole trace.
//
// Rows of one machine must be contiguous (a machine that comes back after another started
// is an error that gives the sort command for the file's layout). Times inside a machine may
// come in any order: container_usage.csv interleaves a machine's containers, so each series
// is sorted by time when its machine is complete (equal times keep their file order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "advisor/trace/trace_reader.h"
#include "advisor/usage/usage.h"
#include "common/status.h"

namespace qrm::advisor {

// One pod's samples on a machine, sorted by time.
struct SeriesData {
  std::string pod;
  std::vector<RawSample> samples;
  std::optional<PriorityClass> priority;
  std::optional<double> request;
};

// Everything a trace says about one machine, every series sorted by time.
struct MachineSeries {
  std::string machine;
  std::vector<RawSample> node;   // the machine-level rows
  std::vector<SeriesData> pods;  // in the order of their first row
  std::optional<double> capacity;
};

// The command that sorts `file` of `format` by machine, then time, for the grouper's error:
//   LC_ALL=C sort -t, -k1,1 -k2,2n machine_usage.csv > machine_usage.sorted.csv
std::string SortCommand(TraceFormat format, std::string_view file);

struct GrouperOptions {
  std::set<std::string> machines;  // keep only these machines (empty: every machine)
  std::size_t max_machines = 0;    // deliver at most this many machines (0: no limit)
  // For the sort command of the "not sorted" error.
  TraceFormat format = TraceFormat::kSimple;
  std::string file = "trace.csv";
};

class MachineGrouper {
 public:
  using Callback = std::function<Status(MachineSeries&&)>;

  MachineGrouper(GrouperOptions options, Callback on_machine);

  // Adds a row. When the row starts a new machine, the previous one is complete and goes to
  // the callback first (its error is returned). Returns StopReading() once nothing more can
  // be delivered (max_machines delivered, or every machine of the filter): the caller stops
  // reading, as ReadTrace does. Errors (kInvalidArgument): a machine that comes back after
  // another machine started, a pod or machine whose priority, request or capacity changes.
  Status Add(const UsageRow& row);

  // Delivers the last machine. Call it once at the end of the trace, also after a stop.
  Status Finish();

  // No more rows are wanted (see Add).
  bool done() const { return done_; }
  std::size_t delivered() const { return delivered_; }

 private:
  Status StartMachine(const UsageRow& row);
  Status AddToCurrent(const UsageRow& row);
  Status Deliver();
  Status NotSortedError(const std::string& machine) const;
  bool Wanted(const std::string& machine) const;

  GrouperOptions options_;
  Callback on_machine_;
  std::optional<MachineSeries> current_;
  std::string last_machine_;                                // of the last row, kept or not
  std::unordered_set<std::string> finished_;                // machines delivered or being delivered
  std::unordered_map<std::string, std::size_t> pod_index_;  // current_->pods by name
  std::size_t delivered_ = 0;
  bool done_ = false;
};

// ReadTrace through a MachineGrouper: every machine of the trace (or of options' filter)
// goes to `on_machine`, complete. Stops reading as soon as the grouper is done. The options'
// format and file are set from `format` and `name`.
StatusOr<TraceStats> ReadMachineSeries(std::istream& in, TraceFormat format, Resource resource,
                                       const std::string& name, GrouperOptions options,
                                       const MachineGrouper::Callback& on_machine);

}  // namespace qrm::advisor
