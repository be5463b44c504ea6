// Reads a cgroup's CPU and memory usage counters, from cgroup v1 or v2 (docs/advisor.md,
// "Sampling"). What is read:
//
//   v2 (<root>/cgroup.controllers exists)   <root>/<path>/cpu.stat         usage_usec
//                                           <root>/<path>/memory.current
//                                           <root>/<path>/memory.stat      inactive_file
//   v1                                      <root>/cpuacct/<path>/cpuacct.usage (ns; also
//                                             under cpu,cpuacct/ where the two are mounted
//                                             together)
//                                           <root>/memory/<path>/memory.usage_in_bytes
//                                           <root>/memory/<path>/memory.stat
//                                             total_inactive_file
//
// The working set is usage minus inactive file pages (what the kubelet and Koordinator call
// it), never below 0. A cgroup that vanished between listing and reading is kNotFound (the
// container went away: not an error of the sampler); anything unreadable or malformed is
// kDataLoss naming the file and the value.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace qrm::advisor {

enum class CgroupVersion { kV1, kV2 };

// v2 when `root` (e.g. /sys/fs/cgroup) holds cgroup.controllers, v1 otherwise.
CgroupVersion DetectCgroupVersion(const std::string& root);

struct CgroupCounters {
  uint64_t cpu_usage_ns = 0;        // cumulative CPU time
  uint64_t memory_working_set = 0;  // bytes
};

class CgroupReader {
 public:
  CgroupReader(std::string root, CgroupVersion version);

  // `path` is the cgroup's path below the hierarchy's root ("/kubepods/pod<uid>/<id>"), as
  // the runtime reports it.
  StatusOr<CgroupCounters> Read(const std::string& path) const;

  CgroupVersion version() const { return version_; }

 private:
  StatusOr<uint64_t> CpuV1(const std::string& path) const;

  std::string root_;
  CgroupVersion version_;
  mutable std::string cpuacct_dir_;  // "/cpuacct" or "/cpu,cpuacct", found on the first read
};

// The value of `key` in a "key value" per line file (memory.stat, cpu.stat). kDataLoss
// naming `file` when it is missing or not a number.
StatusOr<uint64_t> StatField(const std::string& content, const std::string& key,
                             const std::string& file);

}  // namespace qrm::advisor
