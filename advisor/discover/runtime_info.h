// What the runtime tells about one container in its verbose ContainerStatus: the CRI
// ContainerStatusResponse.info map holds, under the key "info", a JSON document. The advisor
// takes from it the container's init pid, its OCI cgroupsPath (docs/advisor.md, "Finding
// containers": the cgroup is found from the runtime, never guessed from a naming convention)
// and the resources the kubelet asked for.
//
// The document, as containerd's CRI plugin writes it (its `ContainerInfo` struct, 1.6 to 2.x,
// encoding/json): {"sandboxID", "pid" (uint32), "removing", "snapshotKey", "snapshotter",
// "runtimeType", "runtimeOptions", "config" (the CRI ContainerConfig), "runtimeSpec" (the OCI
// spec)}. CRI-O writes the same key "info" with {"sandboxID", "pid" (int), "runtimeSpec",
// "privileged"} (plus "checkpointedAt"/"restored" when checkpointing is on), so the fields
// read here mean the same on both. Read from the OCI spec (runtime-spec specs-go, all
// optional, `omitempty`):
//
//   runtimeSpec.linux.cgroupsPath                  string
//   runtimeSpec.linux.resources.cpu.shares         uint64
//   runtimeSpec.linux.resources.cpu.quota          int64 (us per period; -1 unlimited)
//   runtimeSpec.linux.resources.cpu.period         uint64 (us)
//   runtimeSpec.linux.resources.memory.limit       int64 (bytes; -1 unlimited)
//
// A missing field (or a JSON null: Go writes a nil pointer so) is left 0 / empty; a field of
// the wrong type is kDataLoss naming its path and the value found.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::advisor {

// The key of the JSON document in ContainerStatusResponse.info.
inline constexpr std::string_view kVerboseInfoKey = "info";

struct RuntimeInfo {
  int64_t pid = 0;           // the container's init process on the host; 0 if not running
  std::string cgroups_path;  // OCI linux.cgroupsPath as written; empty if absent
  uint64_t cpu_shares = 0;   // 0 if absent
  int64_t cpu_quota = 0;     // 0 if absent
  uint64_t cpu_period = 0;   // 0 if absent
  int64_t memory_limit = 0;  // 0 if absent
};

// Parses the verbose info document. kDataLoss when it is not a JSON object or a field read
// here has the wrong type or an impossible value (a negative pid).
StatusOr<RuntimeInfo> ParseRuntimeInfo(std::string_view json);

}  // namespace qrm::advisor
