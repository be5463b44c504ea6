#include "advisor/replay/trace_replay.h"

#include <fmt/format.h>

#include "advisor/trace/machine_series.h"

namespace qrm::advisor {
namespace {

StatusOr<double> CapacityOf(const MachineSeries& machine, const TraceReplayOptions& options) {
  if (machine.capacity) return *machine.capacity;
  if (options.capacity) return *options.capacity;
  if (options.format != TraceFormat::kSimple) return 100.0;  // percent of the machine
  return InvalidArgumentError(fmt::format(
      "machine {}: capacity: no value (the trace has no capacity column: give --capacity)",
      machine.machine));
}

}  // namespace

StatusOr<ReplayResult> ReplayMachine(const MachineSeries& machine, double capacity,
                                     const ReplayOptions& options) {
  QRM_ASSIGN_OR_RETURN(const std::vector<Observation> steps,
                       FormSteps(machine, capacity, options.steps));
  return ReplaySteps(steps, options);
}

StatusOr<TraceReplayResult> ReplayTrace(std::istream& in, const TraceReplayOptions& options) {
  QRM_RETURN_IF_ERROR(options.replay.Validate());
  TraceReplayResult result;
  GrouperOptions grouping;
  grouping.machines = options.machines;
  grouping.max_machines = options.max_machines;
  grouping.format = options.format;
  grouping.file = options.name;
  MachineGrouper grouper(grouping, [&](MachineSeries&& machine) -> Status {
    QRM_ASSIGN_OR_RETURN(const double capacity, CapacityOf(machine, options));
    QRM_ASSIGN_OR_RETURN(const ReplayResult one, ReplayMachine(machine, capacity, options.replay));
    result.replay.Merge(one);
    return Status::Ok();
  });
  QRM_ASSIGN_OR_RETURN(result.stats,
                       ReadTrace(in, options.format, options.resource, options.name,
                                 [&](const UsageRow& row) { return grouper.Add(row); }));
  // The last machine is delivered at the end, where the reader adds no context.
  QRM_RETURN_IF_ERROR(grouper.Finish().WithContext(options.name));
  return result;
}

}  // namespace qrm::advisor
