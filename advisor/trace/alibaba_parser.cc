// The Alibaba cluster-trace-v2018 usage files: machine_usage.csv and container_usage.csv,
// without header, one sample every ~10 s. Many rows leave metrics empty and many end before
// the layout's last fields, so only the fields a row must have for the asked resource are
// required; a row whose usage field is empty is skipped.
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "advisor/trace/line_parser.h"
#include "common/quote.h"

namespace qrm::advisor::trace_internal {

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

constexpr std::array<std::string_view, 9> kMachineFields = {
    "machine_id", "time_stamp", "cpu_util_percent", "mem_util_percent", "mem_gps",
    "mkpi",       "net_in",     "net_out",          "disk_io_percent"};

constexpr std::array<std::string_view, 11> kContainerFields = {
    "container_id", "machine_id", "time_stamp", "cpu_util_percent", "mem_util_percent", "cpi",
    "mem_gps",      "mpki",       "net_in",     "net_out",          "disk_io_percent"};

struct Layout {
  std::string_view format;  // for messages: "alibaba-machine"
  std::span<const std::string_view> fields;
  std::size_t pod;  // kNone: machine-level rows only
  std::size_t machine;
  std::size_t time;
  std::size_t cpu;
  std::size_t memory;
};

constexpr Layout kMachineLayout{"alibaba-machine", kMachineFields, kNone, 0, 1, 2, 3};
constexpr Layout kContainerLayout{"alibaba-container", kContainerFields, 0, 1, 2, 3, 4};

class AlibabaParser : public LineParser {
 public:
  AlibabaParser(const Layout& layout, Resource resource)
      : layout_(layout), usage_(resource == Resource::kCpu ? layout.cpu : layout.memory) {}

  StatusOr<LineOutcome> Parse(std::string_view line, const Where& where, UsageRow& row) override {
    // Concatenated parts of a trace can leave an empty line behind: it holds nothing.
    if (line.empty()) return LineOutcome::kNoRow;
    SplitFields(line, fields_);
    QRM_RETURN_IF_ERROR(CheckCount(line, where));
    const std::string_view machine = fields_[layout_.machine];
    QRM_RETURN_IF_ERROR(CheckId(where, layout_.fields[layout_.machine], machine));
    if (layout_.pod != kNone) {
      QRM_RETURN_IF_ERROR(CheckId(where, layout_.fields[layout_.pod], fields_[layout_.pod]));
    }
    QRM_ASSIGN_OR_RETURN(const int64_t time,
                         ParseSeconds(where, layout_.fields[layout_.time], fields_[layout_.time]));
    const std::string_view usage = fields_[usage_];
    if (usage.empty()) return LineOutcome::kSkippedEmpty;
    QRM_ASSIGN_OR_RETURN(row.usage, ParseAmount(where, layout_.fields[usage_], usage));
    row.machine.assign(machine);
    if (layout_.pod != kNone) {
      row.pod.assign(fields_[layout_.pod]);
    } else {
      row.pod.clear();
    }
    row.time = time;
    row.priority.reset();
    row.request.reset();
    row.capacity.reset();
    return LineOutcome::kRow;
  }

 private:
  // Rows may end early (real files drop empty trailing fields) but must reach the usage
  // field; more fields than the layout has means another file.
  Status CheckCount(std::string_view line, const Where& where) const {
    const std::size_t count = fields_.size();
    if (count > usage_ && count <= layout_.fields.size()) return Status::Ok();
    const std::string expected = fmt::format("{} rows have {} fields: {}", layout_.format,
                                             layout_.fields.size(), fmt::join(layout_.fields, ","));
    if (count > layout_.fields.size()) {
      return InvalidArgumentError(fmt::format("{}:{}: {} fields in {} ({})", where.file, where.line,
                                              count, Quote(line), expected));
    }
    return InvalidArgumentError(fmt::format("{}:{}: {}: missing, the line {} has {} fields ({})",
                                            where.file, where.line, layout_.fields[count],
                                            Quote(line), count, expected));
  }

  const Layout& layout_;
  const std::size_t usage_;
  std::vector<std::string_view> fields_;  // reused: no allocation per line
};

}  // namespace

std::unique_ptr<LineParser> MakeAlibabaParser(TraceFormat format, Resource resource) {
  const Layout& layout =
      format == TraceFormat::kAlibabaContainer ? kContainerLayout : kMachineLayout;
  return std::make_unique<AlibabaParser>(layout, resource);
}

}  // namespace qrm::advisor::trace_internal
