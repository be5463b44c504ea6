// The text form of each OciProperty as plugins send it in allocation_result, and the
// per-field operations ContainerUpdate is built from.
//
// Values are validated strictly here, before anything reaches the runtime: a value the
// runtime misreads (or silently ignores) would run the container outside its allocation.
#pragma once

#include <string>
#include <string_view>

#include "api/cri_runtime_v1.pb.h"
#include "common/status.h"
#include "qrm/apply/oci_property.h"

namespace qrm::apply {

// Parses `value` as property `p` and sets that one field of `*out` (other fields are not
// touched). Stored forms are canonical, so equal meanings compare equal:
//   CpusetCpus, CpusetMems  list format ("0-3,8"), non-empty; mems ids <= 63
//   CpuPeriod, CpuShares, MemoryLimitInBytes      decimal int64 >= 0
//   CpuQuota, MemorySwapLimitInBytes              decimal int64, -1 (no limit) or >= 0
//   OomScoreAdj                                   decimal integer in [-1000, 1000]
//   HugepageLimits  "2MB:1073741824,1GB:0": page sizes as the kernel's hugetlb files name
//                   them (power of two; KB/MB below 1024, else GB), each at most once;
//                   limits decimal uint64. Stored sorted by page size.
//   Unified         JSON object of string -> string, keys non-empty without '/' or NUL
// Errors are kInvalidArgument: `resource "<resource>": <Property> value "<value>": <reason>`.
Status ParsePropertyValue(std::string_view resource, OciProperty p, std::string_view value,
                          ::runtime::v1::LinuxContainerResources* out);

// Deterministic serialization of field `p` of `r` alone (hugepage entries sorted by page
// size, map keys sorted): equal bytes mean the field carries the same value.
std::string OwnedFieldBytes(OciProperty p, const ::runtime::v1::LinuxContainerResources& r);

// Writes field `p` of `from` into `to`. Scalars and strings are overwritten; a hugepage
// limit replaces every entry of `to` with the same page size (others are kept, new sizes
// appended); Unified keys are set or overwritten and other keys kept. Merging rather than
// replacing the collections leaves the kubelet's limits for sizes/keys qrm does not set.
void ApplyOwnedField(OciProperty p, const ::runtime::v1::LinuxContainerResources& from,
                     ::runtime::v1::LinuxContainerResources* to);

}  // namespace qrm::apply
