// A container's cgroup directory, relative to the root of a cgroup hierarchy (what
// advisor/sample's CgroupReader takes), from what the runtime reports.
//
// From the OCI spec's linux.cgroupsPath (runc's two cgroup drivers):
//
//   cgroupfs   "/kubepods/burstable/pod<uid>/<id>"          the path itself
//   systemd    "<slice>:<prefix>:<name>"                    the slice expanded into its
//              "kubepods-burstable-pod123.slice:cri-containerd:abc"  parents, then the unit:
//     -> /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod123.slice/
//        cri-containerd-abc.scope
//
// runc's systemd rules: a '-' in a slice name separates it from its parent slice ("a-b.slice"
// lies in "a.slice"), "-.slice" is the root, an empty slice is "system.slice", and the unit is
// "<prefix>-<name>.scope" unless <name> itself ends in ".slice" (then it is that slice). With
// cgroup v1 runc puts systemd units below the cgroup of pid 1 with "init.scope" cut off,
// which is the root on a host; the path returned here is relative to that.
//
// A cgroupfs path that does not start with '/' is refused: runc resolves it against its own
// cgroup, which the advisor cannot know. Such containers, and any whose path is refused, can
// be found from their process instead (ProcessCgroup below).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::advisor {

// The cgroup directory ("/a/b", or "/" for the root) for an OCI cgroupsPath. kInvalidArgument
// naming the value when it is empty, relative, in neither form, longer than PATH_MAX (4096),
// or holds "..", "." or an empty component (nothing outside the hierarchy can be named).
StatusOr<std::string> CgroupDirFromCgroupsPath(std::string_view cgroups_path);

// "/a.slice/a-b.slice" for "a-b.slice" (runc's rules above); kInvalidArgument otherwise.
StatusOr<std::string> ExpandSystemdSlice(std::string_view slice);

// From the text of a /proc/<pid>/cgroup file: the path of the line whose hierarchy holds
// `controller` ("cpuacct", "memory"; v1 lines "N:cpu,cpuacct:/path"), else the unified line
// "0::/path" (cgroup v2, where no v1 hierarchy has the controller); `controller` empty asks
// for the unified line. kNotFound when there is no such line or the cgroup was removed
// ("/path (deleted)"); kDataLoss naming `where` and the line for a malformed line or a path
// outside this process's cgroup namespace ("/../x").
StatusOr<std::string> CgroupFromProcFile(std::string_view content, std::string_view controller,
                                         std::string_view where);

// Reads <procfs_root>/<pid>/cgroup and applies CgroupFromProcFile. kNotFound when the process
// is gone.
StatusOr<std::string> ProcessCgroup(const std::string& procfs_root, int64_t pid,
                                    std::string_view controller);

}  // namespace qrm::advisor
