#include "advisor/trace/machine_series.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::advisor {

namespace {

void SortByTime(std::vector<RawSample>& samples) {
  // Stable: samples of equal time keep their order in the file.
  std::stable_sort(samples.begin(), samples.end(),
                   [](const RawSample& a, const RawSample& b) { return a.time < b.time; });
}

std::string SortedName(std::string_view file) {
  if (file.ends_with(".csv")) {
    file.remove_suffix(4);
    return fmt::format("{}.sorted.csv", file);
  }
  return fmt::format("{}.sorted", file);
}

// Keeps the first value a machine or pod gives; true when a later row gives another one.
template <typename T>
bool Changes(std::optional<T>& kept, const std::optional<T>& value) {
  if (!value) return false;
  if (!kept) {
    kept = value;
    return false;
  }
  return *kept != *value;
}

template <typename T>
Status ChangedError(std::string_view owner, std::string_view field, const T& value, const T& kept) {
  return InvalidArgumentError(
      fmt::format("{}: {}: invalid value {} (its earlier rows say {}: one value each)", owner,
                  field, value, kept));
}

}  // namespace

std::string SortCommand(TraceFormat format, std::string_view file) {
  const std::string out = SortedName(file);
  switch (format) {
    case TraceFormat::kAlibabaMachine:
      return fmt::format("LC_ALL=C sort -t, -k1,1 -k2,2n {} > {}", file, out);
    case TraceFormat::kAlibabaContainer:
      return fmt::format("LC_ALL=C sort -t, -k2,2 -k3,3n {} > {}", file, out);
    case TraceFormat::kSimple: break;
  }
  return fmt::format(
      "(head -n1 {0} && tail -n+2 {0} | LC_ALL=C sort -t, -k2,2 -k1,1n) > {1} (for a file "
      "whose first line is the header time,machine,...: -k names the machine's column, then "
      "the time's)",
      file, out);
}

MachineGrouper::MachineGrouper(GrouperOptions options, Callback on_machine)
    : options_(std::move(options)), on_machine_(std::move(on_machine)) {}

bool MachineGrouper::Wanted(const std::string& machine) const {
  return options_.machines.empty() || options_.machines.contains(machine);
}

Status MachineGrouper::Add(const UsageRow& row) {
  if (done_) return StopReading();
  // Rows of the machine of the previous row, the common case, cost one string comparison.
  if (row.machine != last_machine_) QRM_RETURN_IF_ERROR(StartMachine(row));
  if (done_) return StopReading();
  if (!current_) return Status::Ok();  // a machine the filter skips
  return AddToCurrent(row);
}

Status MachineGrouper::StartMachine(const UsageRow& row) {
  if (finished_.contains(row.machine)) return NotSortedError(row.machine);
  if (current_) {
    QRM_RETURN_IF_ERROR(Deliver());
    const bool all_asked = options_.machines.size() == delivered_;
    if ((options_.max_machines > 0 && delivered_ >= options_.max_machines) || all_asked) {
      done_ = true;
      return Status::Ok();
    }
  }
  last_machine_ = row.machine;
  if (!Wanted(row.machine)) return Status::Ok();
  finished_.insert(row.machine);
  current_.emplace();
  current_->machine = row.machine;
  return Status::Ok();
}

Status MachineGrouper::AddToCurrent(const UsageRow& row) {
  MachineSeries& series = *current_;
  // Messages are formatted only on an error: this runs for every row of the trace.
  const auto machine = [&] { return fmt::format("machine {}", Quote(series.machine)); };
  if (Changes(series.capacity, row.capacity)) {
    return ChangedError(machine(), "capacity", *row.capacity, *series.capacity);
  }
  if (row.pod.empty()) {
    series.node.push_back(RawSample{row.time, row.usage});
    return Status::Ok();
  }
  const auto [it, added] = pod_index_.try_emplace(row.pod, series.pods.size());
  if (added) series.pods.push_back(SeriesData{row.pod, {}, std::nullopt, std::nullopt});
  SeriesData& pod = series.pods[it->second];
  const auto owner = [&] { return fmt::format("{}, pod {}", machine(), Quote(pod.pod)); };
  if (Changes(pod.priority, row.priority)) {
    return ChangedError(owner(), "priority", PriorityClassName(*row.priority),
                        PriorityClassName(*pod.priority));
  }
  if (Changes(pod.request, row.request)) {
    return ChangedError(owner(), "request", *row.request, *pod.request);
  }
  pod.samples.push_back(RawSample{row.time, row.usage});
  return Status::Ok();
}

Status MachineGrouper::Deliver() {
  MachineSeries series = std::move(*current_);
  current_.reset();
  pod_index_.clear();
  SortByTime(series.node);
  for (SeriesData& pod : series.pods) SortByTime(pod.samples);
  ++delivered_;
  return on_machine_(std::move(series));
}

Status MachineGrouper::Finish() {
  done_ = true;
  if (!current_) return Status::Ok();
  return Deliver();
}

Status MachineGrouper::NotSortedError(const std::string& machine) const {
  return InvalidArgumentError(fmt::format(
      "machine {} appears again after another machine's rows: the rows of a machine must be "
      "contiguous. Sort the file by machine, then time: {}",
      Quote(machine), SortCommand(options_.format, options_.file)));
}

StatusOr<TraceStats> ReadMachineSeries(std::istream& in, TraceFormat format, Resource resource,
                                       const std::string& name, GrouperOptions options,
                                       const MachineGrouper::Callback& on_machine) {
  options.format = format;
  options.file = name;
  MachineGrouper grouper(std::move(options), on_machine);
  QRM_ASSIGN_OR_RETURN(
      const TraceStats stats,
      ReadTrace(in, format, resource, name, [&](const UsageRow& row) { return grouper.Add(row); }));
  QRM_RETURN_IF_ERROR(grouper.Finish().WithContext(fmt::format("{}: at the end", name)));
  return stats;
}

}  // namespace qrm::advisor
