// What every qrmctl command prints with: errors, the JSON of an answer, times, tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "common/status.h"

namespace qrm::ctl {

// Prints "qrmctl: <message>" to stderr; returns 1 (the operation failed).
int Fail(const Status& s);
// Prints `m` as JSON (proto field names) to stdout; returns 0, or 1 when it cannot.
int PrintJson(const google::protobuf::Message& m);
// "2026-11-26T14:46:46Z"; "-" for 0.
std::string Time(int64_t unix_seconds);
// Prints rows as left-aligned columns.
void PrintTable(const std::vector<std::vector<std::string>>& rows);

}  // namespace qrm::ctl
