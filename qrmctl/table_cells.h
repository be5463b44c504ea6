// The text of qrmctl's table cells: one rendering per value, the same in every row, so that
// columns can be read down (and compared by scripts) without guessing what a number means.
// `-o json` prints the raw answer; these are for people.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "api/admin_v1.pb.h"

namespace qrm::ctl {

// One container's resources, sorted by resource name:
//   "cpu=2 (CpusetCpus 4-5) memory=64Mi (CpusetMems 0) qrm.io/nic=1 (eth1)".
// The quantity always comes first, so a cpuset "0" is never read as "zero CPUs"; memory and
// hugepages quantities are bytes and print with binary units; the allocation result follows
// in parentheses, named by the cgroup field it sets when it sets one. Resources the container
// was admitted without (their plugin was down) follow as "cpu=skipped(pending)".
std::string ResourcesCell(const ::qrm::admin::v1::ContainerAllocation& container);

// A plugin's last error, on one line and at most `max_chars` characters ("..." marks a cut;
// `qrmctl plugins -o json` has the whole text). "-" when there is none.
std::string ErrorCell(std::string_view error, size_t max_chars = 80);

// A quantity as a person reads it: bytes with Ki/Mi/Gi/Ti when `resource` counts bytes
// (memory, hugepages-*), otherwise the shortest decimal form ("2", "0.5").
std::string QuantityText(std::string_view resource, double quantity);

}  // namespace qrm::ctl
