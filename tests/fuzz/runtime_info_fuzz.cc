// Fuzzes what advisor/discover reads from the container runtime and procfs: the verbose
// ContainerStatus info document, the OCI cgroupsPath turned into a cgroup directory, and the
// lines of /proc/<pid>/cgroup. The runtime is trusted, but a broken or future one (or another
// runtime behind the same CRI) may send anything, and a cgroup path that escaped its
// hierarchy would make the sampler read the wrong files.
//
// Input: the first byte selects (byte % 3: info document, cgroupsPath, /proc/<pid>/cgroup),
// the rest is the text. Properties beyond "does not crash":
//  * the info parser fails only with kDataLoss, and what it accepts a second parse agrees on,
//    with a pid in [0, 2^31);
//  * the cgroupsPath converter fails only with kInvalidArgument, and a directory it gives is
//    "/" or "/c1/.../cn" with no empty, "." or ".." component nor control byte, and is given
//    back unchanged when converted again (a cgroupfs path);
//  * the /proc/<pid>/cgroup reader fails only with kNotFound or kDataLoss, and a path it gives
//    is such a directory too.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "advisor/discover/cgroup_path.h"
#include "advisor/discover/runtime_info.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "runtime_info_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

void CheckDirectory(const std::string& dir) {
  Check(!dir.empty() && dir[0] == '/', "a directory that does not start with '/'");
  for (const char c : dir) Check(static_cast<unsigned char>(c) >= 0x20, "a control byte");
  if (dir == "/") return;
  Check(dir.back() != '/', "a trailing '/'");
  Check(dir.find("//") == std::string::npos, "an empty component");
  const std::string padded = dir + "/";
  Check(padded.find("/../") == std::string::npos, "a \"..\" component");
  Check(padded.find("/./") == std::string::npos, "a \".\" component");
}

void FuzzCgroupsPath(std::string_view text) {
  const qrm::StatusOr<std::string> dir = qrm::advisor::CgroupDirFromCgroupsPath(text);
  if (!dir.ok()) {
    Check(dir.status().code() == qrm::StatusCode::kInvalidArgument,
          "a cgroupsPath error that is not kInvalidArgument");
    return;
  }
  CheckDirectory(*dir);
  const qrm::StatusOr<std::string> again = qrm::advisor::CgroupDirFromCgroupsPath(*dir);
  Check(again.ok() && *again == *dir, "a directory not given back unchanged");
}

void FuzzInfo(std::string_view text) {
  const qrm::StatusOr<qrm::advisor::RuntimeInfo> info = qrm::advisor::ParseRuntimeInfo(text);
  if (!info.ok()) {
    Check(info.status().code() == qrm::StatusCode::kDataLoss, "an info error not kDataLoss");
    return;
  }
  Check(info->pid >= 0 && info->pid <= INT32_MAX, "a pid out of range");
  const qrm::StatusOr<qrm::advisor::RuntimeInfo> again = qrm::advisor::ParseRuntimeInfo(text);
  Check(again.ok() && again->pid == info->pid && again->cgroups_path == info->cgroups_path &&
            again->cpu_shares == info->cpu_shares && again->cpu_quota == info->cpu_quota &&
            again->cpu_period == info->cpu_period && again->memory_limit == info->memory_limit,
        "two parses disagree");
  if (!info->cgroups_path.empty()) FuzzCgroupsPath(info->cgroups_path);
}

void FuzzProcCgroup(std::string_view text) {
  for (const char* controller : {"cpuacct", ""}) {
    const qrm::StatusOr<std::string> path =
        qrm::advisor::CgroupFromProcFile(text, controller, "/proc/1/cgroup");
    if (path.ok()) {
      CheckDirectory(*path);
    } else {
      Check(path.status().code() == qrm::StatusCode::kNotFound ||
                path.status().code() == qrm::StatusCode::kDataLoss,
            "a /proc/<pid>/cgroup error not kNotFound nor kDataLoss");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: FuzzInfo(text); break;
    case 1: FuzzCgroupsPath(text); break;
    default: FuzzProcCgroup(text);
  }
  return 0;
}
