// The advisor's side of the CPU plugin's pool control file (docs/cpu-plugin.md, "Resizing
// pools at run time"): it writes {"shared": N} there, the plugin applies it and the host's
// reconcile moves the containers. The plugin owns the file's grammar; the advisor writes only
// the shared size (later dedicated admissions then shrink the shared pool, not the reclaimed
// one, and the advisor corrects it at its next decision) and reads back what is there.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"

namespace qrm::advisor {

struct PoolControlContent {
  std::optional<int> shared;
  std::optional<int> reclaimed;  // nullopt also for "auto"
};

// Replaces the file atomically and durably with {"shared":N}, or {"reclaimed":0} when the
// shared pool takes all `pool_cpus` (the plugin wants a shared size alone to leave the
// reclaimed pool a CPU; a reclaimed size of 0 is its way to say "none"). The directory must
// exist.
Status WriteSharedPoolSize(const std::string& path, int shared, int pool_cpus);

// The file's sizes; kNotFound when there is no file; kDataLoss naming the file and the key
// for content that is not an object of whole numbers (or "auto" for reclaimed).
StatusOr<PoolControlContent> ReadPoolControl(const std::string& path);

}  // namespace qrm::advisor
