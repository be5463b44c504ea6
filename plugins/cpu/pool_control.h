// The pool control file: how a QoS system (or an operator) resizes the CPU pools at run time.
//
// The file is JSON, {"reclaimed": 52} or {"shared": 28} or both, with whole CPU counts:
//   reclaimed  size of the reclaimed pool (0: reclaimed_cores share the shared pool), or
//              "auto" (kReclaimedAuto, the default: pools.h), which cannot go with shared
//   shared     alone: size of the shared pool (at least 1, less than the CPUs neither
//              reserved nor dedicated), kept as the setting; the reclaimed pool gets the
//              rest, and later dedicated admissions shrink it first (to 0), then the shared
//              pool (to 1), instead of being refused (CpuState::shared_size)
// Both together must add up to the CPUs neither reserved nor dedicated at that moment, and
// set the reclaimed size (an exact size, as "reclaimed" alone).
// Writers replace the file atomically (write a temp file in the same directory, rename it
// over the target); the plugin watches the directory and applies every new version.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::cpu {

inline constexpr const char* kPoolControlFileName = "pools.json";
// Pool sizes above this are typos, not machines (CpuSet ids stop at 8191).
inline constexpr int kMaxPoolSize = 8192;

struct PoolSizes {
  std::optional<int> reclaimed;  // kReclaimedAuto for "auto"
  std::optional<int> shared;

  friend bool operator==(const PoolSizes&, const PoolSizes&) = default;
};

// Parses the file's JSON. kInvalidArgument naming the key and the value for unknown keys,
// non-integers other than a reclaimed "auto", sizes outside [0, kMaxPoolSize] ([1, ...] for
// shared), auto with shared, and an object naming neither pool.
StatusOr<PoolSizes> ParsePoolControl(std::string_view json);

// Parses the --set-pools argument: "reclaimed=52" (or reclaimed=auto), "shared=28" or both,
// comma-separated.
StatusOr<PoolSizes> ParseSetPools(std::string_view text);

// The file's JSON for `sizes`: {"reclaimed":52,"shared":28}.
std::string FormatPoolControl(const PoolSizes& sizes);

// Writes `sizes` to `path` atomically and durably: a temp file in the same directory, fsync,
// rename over `path`, fsync of the directory. The directory must exist.
Status WritePoolControlFile(const std::string& path, const PoolSizes& sizes);

// Reads and parses the file; kNotFound when it does not exist.
StatusOr<PoolSizes> ReadPoolControlFile(const std::string& path);

}  // namespace qrm::cpu
