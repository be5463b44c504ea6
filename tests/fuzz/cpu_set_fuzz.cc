// Fuzzes the kernel list-format parsers (common/id_list.h) through CpuSet and NumaMask.
//
// Properties, not just "does not crash":
//  * whatever Parse accepts prints canonically and parses back to the same set;
//  * the canonical text is a fixed point (printing the re-parsed set gives it again);
//  * ParseIdList returns sorted, disjoint, non-adjacent ranges within max_id;
//  * rejected text is kInvalidArgument (never another code).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/cpu_set.h"
#include "common/id_list.h"
#include "common/numa_mask.h"
#include "common/status.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view text) {
  std::fprintf(stderr, "cpu_set_fuzz: %s for input \"%.*s\"\n", what, static_cast<int>(text.size()),
               text.data());
  std::abort();
}

void Check(bool ok, const char* what, std::string_view text) {
  if (!ok) Fail(what, text);
}

void FuzzCpuSet(std::string_view text, int max_cpu_id) {
  qrm::StatusOr<qrm::CpuSet> set = qrm::CpuSet::Parse(text, max_cpu_id);
  if (!set.ok()) {
    Check(set.status().code() == qrm::StatusCode::kInvalidArgument, "CpuSet error code", text);
    return;
  }
  const std::string canonical = set->ToString();
  qrm::StatusOr<qrm::CpuSet> again = qrm::CpuSet::Parse(canonical, max_cpu_id);
  Check(again.ok(), "CpuSet canonical text rejected", text);
  Check(*again == *set, "CpuSet round trip changed the set", text);
  Check(again->ToString() == canonical, "CpuSet canonical text not a fixed point", text);
  Check(set->Size() == static_cast<int>(set->Ids().size()), "CpuSet Size != Ids().size()", text);
  if (!set->Empty()) {
    Check(set->Ids().back() <= max_cpu_id, "CpuSet id above max", text);
    Check(set->First() == set->Ids().front(), "CpuSet First != smallest id", text);
  }
  // FromIds of the members is the same set (the other way in from outside the program).
  const std::vector<int> ids = set->Ids();
  qrm::StatusOr<qrm::CpuSet> from_ids = qrm::CpuSet::FromIds(ids, max_cpu_id);
  Check(from_ids.ok() && *from_ids == *set, "CpuSet FromIds(Ids()) differs", text);
}

void FuzzIdList(std::string_view text, int max_id) {
  auto ranges = qrm::ParseIdList(text, max_id, "fuzz list");
  if (!ranges.ok()) return;
  for (size_t i = 0; i < ranges->size(); ++i) {
    const qrm::IdRange& r = (*ranges)[i];
    Check(r.first >= 0 && r.first <= r.last && r.last <= max_id, "IdRange out of bounds", text);
    if (i > 0) Check((*ranges)[i - 1].last + 1 < r.first, "IdRanges not disjoint", text);
  }
  auto again = qrm::ParseIdList(qrm::FormatIdRanges(*ranges), max_id, "fuzz list");
  Check(again.ok() && *again == *ranges, "FormatIdRanges does not parse back", text);
}

void FuzzNumaMask(std::string_view text, int max_nodes) {
  qrm::StatusOr<qrm::NumaMask> mask = qrm::NumaMask::Parse(text, max_nodes);
  if (!mask.ok()) {
    Check(mask.status().code() == qrm::StatusCode::kInvalidArgument, "NumaMask error code", text);
    return;
  }
  qrm::StatusOr<qrm::NumaMask> again = qrm::NumaMask::Parse(mask->ToString(), max_nodes);
  Check(again.ok() && *again == *mask, "NumaMask round trip changed the mask", text);
  Check(mask->Count() == static_cast<int>(mask->Nodes().size()), "NumaMask Count != Nodes", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The default bound and a small one, so the limit checks see ids on both sides of it.
  for (int max_id : {qrm::CpuSet::kDefaultMaxCpuId, 63, 5}) {
    FuzzCpuSet(text, max_id);
    FuzzIdList(text, max_id);
  }
  for (int max_nodes : {qrm::NumaMask::kMaxNodes, 4, 0, 100}) FuzzNumaMask(text, max_nodes);
  return 0;
}
