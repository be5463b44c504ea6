// The per-layout half of ReadTrace: ReadTrace reads lines, counts them and feeds the sink;
// a LineParser turns one line into a row. One implementation per layout.
#pragma once

#include <memory>
#include <string_view>

#include "advisor/trace/fields.h"
#include "advisor/trace/trace_reader.h"
#include "common/status.h"

namespace qrm::advisor::trace_internal {

enum class LineOutcome {
  kRow,           // `row` holds a usage row
  kSkippedEmpty,  // a valid row whose usage field is empty
  kNoRow,         // a header, comment or blank line
};

class LineParser {
 public:
  virtual ~LineParser() = default;

  // Parses one line (without its line ending) into `row`, which holds the previous row:
  // every field a parser sets, it sets on every row.
  virtual StatusOr<LineOutcome> Parse(std::string_view line, const Where& where, UsageRow& row) = 0;

  // Called once after the last line, with the number of the last line.
  virtual Status AtEnd(const Where& /*where*/) const { return Status::Ok(); }
};

// `format` is kAlibabaMachine or kAlibabaContainer.
std::unique_ptr<LineParser> MakeAlibabaParser(TraceFormat format, Resource resource);
std::unique_ptr<LineParser> MakeSimpleParser();

}  // namespace qrm::advisor::trace_internal
