// The Linux "list format" for sets of small ids ("0-3,8-11", "5", ""), as the kernel
// prints CPU and NUMA node masks in sysfs (/sys/devices/system/cpu/online) and cgroupfs
// (cpuset.cpus, cpuset.mems). Shared by CpuSet and NumaMask so both accept and print
// exactly the same language.
//
// The parser is strict on purpose: these strings come from the kernel, container
// runtimes and users' pod annotations, and a silently misread cpuset pins a workload
// onto the wrong cores. Anything the kernel would not print is rejected with a message
// naming the text, the offending element and the reason.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace qrm {

// An inclusive run of ids [first, last].
struct IdRange {
  int first = 0;
  int last = 0;

  friend bool operator==(const IdRange&, const IdRange&) = default;
};

// Parses `text` against the grammar
//
//   list    := "" | element ("," element)*
//   element := id | id "-" id        (start <= end)
//   id      := [0-9]+                (value <= max_id; leading zeros allowed, like the kernel)
//
// The empty string is the empty set. No whitespace is allowed anywhere, including the
// newline sysfs appends: read sysfs files through TrimSysfsValue first. Signs, hex and the
// kernel's stride syntax ("0-7:2/4") are rejected. Numbers too large for any integer type
// are reported as exceeding `max_id`, never wrapped.
//
// Repeated or overlapping elements ("1,1", "0-3,2-5") are accepted, as the kernel's
// bitmap_parselist() does, and mean their union: the list describes a set.
//
// Returns the set as sorted, disjoint, non-adjacent ranges ("3,0-1,2" -> [0,3]).
// Errors are kInvalidArgument: `<what> "<text>": <reason>`, where `what` names what is being
// parsed ("cpu list", "NUMA node list"), e.g.
//   cpu list "0-3,5-2": range "5-2" starts above its end
StatusOr<std::vector<IdRange>> ParseIdList(std::string_view text, int max_id,
                                           std::string_view what);

// Canonical list format of sorted, disjoint ranges: a range of one id prints as "5", any
// longer run as "first-last" (the kernel prints "0-1", not "0,1"). Adjacent input ranges
// are merged, so the output is canonical as long as the input is sorted and disjoint.
std::string FormatIdRanges(std::span<const IdRange> ranges);

// Canonical list format of `ids` in any order, duplicates allowed. Ids must be >= 0.
std::string FormatIdList(std::span<const int> ids);

// Strips the trailing newline (and any other trailing ASCII whitespace) that sysfs and
// cgroupfs append to a value, so "0-3\n" can go to the strict parser. Leading whitespace is
// kept: the kernel never writes it, so it is an error worth reporting.
std::string_view TrimSysfsValue(std::string_view text);

}  // namespace qrm
