// qrm's simple trace CSV (docs/trace-formats.md): a header line names the columns, in any
// order; `#` comment lines and blank lines may appear anywhere. Being our own format, every
// row has exactly the header's fields.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "advisor/trace/line_parser.h"
#include "common/quote.h"

namespace qrm::advisor::trace_internal {

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

enum Column { kTime, kMachine, kPod, kUsage, kPriority, kRequest, kCapacity, kColumns };
constexpr std::array<std::string_view, kColumns> kColumnNames = {
    "time", "machine", "pod", "usage", "priority", "request", "capacity"};
constexpr std::size_t kRequiredColumns = 4;  // time, machine, pod, usage

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

class SimpleParser : public LineParser {
 public:
  StatusOr<LineOutcome> Parse(std::string_view line, const Where& where, UsageRow& row) override {
    if (IsBlank(line) || line.front() == '#') return LineOutcome::kNoRow;
    if (!have_header_) {
      QRM_RETURN_IF_ERROR(ParseHeader(line, where));
      return LineOutcome::kNoRow;
    }
    SplitFields(line, fields_);
    if (fields_.size() != header_size_) {
      return InvalidArgumentError(fmt::format("{}:{}: {} fields in {} (the header has {})",
                                              where.file, where.line, fields_.size(), Quote(line),
                                              header_size_));
    }
    QRM_RETURN_IF_ERROR(CheckId(where, "machine", Field(kMachine)));
    const std::string_view pod = Field(kPod);
    if (!pod.empty()) QRM_RETURN_IF_ERROR(CheckId(where, "pod", pod));
    QRM_ASSIGN_OR_RETURN(const int64_t time, ParseSeconds(where, "time", Field(kTime)));
    QRM_RETURN_IF_ERROR(ParseOptional(where, pod.empty(), row));
    if (Field(kUsage).empty()) return LineOutcome::kSkippedEmpty;
    QRM_ASSIGN_OR_RETURN(row.usage, ParseAmount(where, "usage", Field(kUsage)));
    row.machine.assign(Field(kMachine));
    row.pod.assign(pod);
    row.time = time;
    return LineOutcome::kRow;
  }

  Status AtEnd(const Where& where) const override {
    if (have_header_) return Status::Ok();
    return InvalidArgumentError(fmt::format(
        "{}:{}: no header line (a simple trace starts with one, e.g. time,machine,pod,usage)",
        where.file, where.line));
  }

 private:
  // The field of `column`, empty for an optional column the header does not have.
  std::string_view Field(Column column) const {
    return index_[column] == kNone ? std::string_view() : fields_[index_[column]];
  }

  Status ParseHeader(std::string_view line, const Where& where) {
    // A spreadsheet's UTF-8 byte order mark is not part of the first column's name.
    if (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    SplitFields(line, fields_);
    index_.fill(kNone);
    const std::string expected = fmt::format("{}", fmt::join(kColumnNames, ", "));
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      std::size_t column = 0;
      while (column < kColumns && kColumnNames[column] != fields_[i]) ++column;
      if (column == kColumns || index_[column] != kNone) {
        const char* what = column == kColumns ? "unknown column" : "repeated column";
        return InvalidArgumentError(fmt::format("{}:{}: header: {} {} (columns: {})", where.file,
                                                where.line, what, Quote(fields_[i]), expected));
      }
      index_[column] = i;
    }
    for (std::size_t column = 0; column < kRequiredColumns; ++column) {
      if (index_[column] != kNone) continue;
      return InvalidArgumentError(
          fmt::format("{}:{}: header: no \"{}\" column in {} (time, machine, pod and usage are "
                      "required; priority, request and capacity are optional)",
                      where.file, where.line, kColumnNames[column], Quote(line)));
    }
    header_size_ = fields_.size();
    have_header_ = true;
    return Status::Ok();
  }

  // priority and request belong to a pod; capacity to the machine (on any of its rows).
  Status ParseOptional(const Where& where, bool machine_level, UsageRow& row) const {
    row.priority.reset();
    row.request.reset();
    row.capacity.reset();
    for (const Column column : {kPriority, kRequest}) {
      if (machine_level && !Field(column).empty()) {
        return FieldError(where, kColumnNames[column], Field(column),
                          "empty on a machine-level row: it is a pod's");
      }
    }
    if (const std::string_view value = Field(kPriority); !value.empty()) {
      StatusOr<PriorityClass> priority = ParsePriorityClass(value);
      if (!priority.ok()) return FieldError(where, "priority", value, "prod, mid, batch or free");
      row.priority = *priority;
    }
    if (const std::string_view value = Field(kRequest); !value.empty()) {
      QRM_ASSIGN_OR_RETURN(row.request, ParseAmount(where, "request", value));
    }
    if (const std::string_view value = Field(kCapacity); !value.empty()) {
      QRM_ASSIGN_OR_RETURN(const double capacity, ParseAmount(where, "capacity", value));
      if (capacity == 0) return FieldError(where, "capacity", value, "a number > 0");
      row.capacity = capacity;
    }
    return Status::Ok();
  }

  bool have_header_ = false;
  std::size_t header_size_ = 0;
  std::array<std::size_t, kColumns> index_{};  // field index of each column, kNone if absent
  std::vector<std::string_view> fields_;       // reused: no allocation per line
};

}  // namespace

std::unique_ptr<LineParser> MakeSimpleParser() {
  return std::make_unique<SimpleParser>();
}

}  // namespace qrm::advisor::trace_internal
