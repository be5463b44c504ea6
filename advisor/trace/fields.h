// Field parsing shared by the trace layouts: splitting a line at commas and the checks every
// value goes through, with messages that name the file, the line, the field and the value.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace qrm::advisor::trace_internal {

// Where a value came from: "machine_usage.csv:12".
struct Where {
  std::string_view file;
  uint64_t line = 0;
};

// Splits at every comma into `out` (cleared first): the layouts have no quoting.
void SplitFields(std::string_view line, std::vector<std::string_view>& out);

// "<file>:<line>: <field>: invalid value "<value>" (<expected>)"
Status FieldError(const Where& where, std::string_view field, std::string_view value,
                  std::string_view expected);

// A whole number of seconds >= 0, in decimal digits, optionally followed by ".0" ("386640.0").
StatusOr<int64_t> ParseSeconds(const Where& where, std::string_view field, std::string_view value);

// A finite number >= 0 that parses whole ("12", "0.5", "1e3"; never "nan", "inf", " 1").
// Parsed with std::from_chars: the same on every locale.
StatusOr<double> ParseAmount(const Where& where, std::string_view field, std::string_view value);

// Why `id` cannot be a machine or pod id, or nullptr when it can: ids are non-empty and
// hold no comma, quote or control byte (the simple format could not write them back).
const char* IdProblem(std::string_view id);

// kInvalidArgument naming the field when IdProblem(value) finds one.
Status CheckId(const Where& where, std::string_view field, std::string_view value);

}  // namespace qrm::advisor::trace_internal
