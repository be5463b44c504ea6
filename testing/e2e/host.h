// Host-side views the e2e harness and tests use to check and undo what containerd did:
// mounts, cgroup v1/v2 hierarchies, processes.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

#include "common/status.h"

namespace qrm::e2e {

struct MountEntry {
  std::string mount_point;
  std::string fs_type;
  std::string source;
  std::string super_options;  // e.g. "rw,cpuset" for a cgroup v1 hierarchy
};

// Parses a mountinfo file (default: this process's mount namespace).
std::vector<MountEntry> ReadMounts(const std::string& mountinfo = "/proc/self/mountinfo");

// Mount points equal to or below `dir`, in mount order.
std::vector<std::string> MountPointsUnder(const std::string& dir);

// Detaches (umount2 MNT_DETACH) every mount at or below `dir`, deepest first; returns how many.
int UnmountAllUnder(const std::string& dir);

// Mount point of the cgroup v1 hierarchy carrying `controller` ("cpuset"), or empty.
std::string CgroupV1Mount(const std::string& controller);

// Mount points of every cgroup (v1) and cgroup2 hierarchy.
std::vector<std::string> CgroupMounts();

// The cgroup path of `pid` in the v1 hierarchy carrying `controller`, from /proc/PID/cgroup.
StatusOr<std::string> ProcessCgroup(pid_t pid, const std::string& controller);

// Removes the cgroup `relative` ("/qrm-e2e-abc") and everything below it from every
// hierarchy, SIGKILLing processes still in it (only ever a cgroup the caller created).
// Returns the directories it could not remove.
std::vector<std::string> RemoveCgroupTree(const std::string& relative);

// Pids of live (non-zombie) processes one of whose argv entries equals `arg`.
std::vector<pid_t> PidsWithArgument(const std::string& arg);

// True if /proc/PID exists and is not a zombie.
bool ProcessAlive(pid_t pid);

// Number of online CPUs this process may use.
int UsableCpus();

}  // namespace qrm::e2e
