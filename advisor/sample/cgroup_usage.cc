#include "advisor/sample/cgroup_usage.h"

#include <cerrno>
#include <cstring>
#include <sstream>
#include <string_view>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advisor/sample/counter_text.h"
#include "common/errno_text.h"

namespace qrm::advisor {
namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The whole of a small control file. kNotFound when the file (the cgroup) is gone. Plain
// open/read/close: a tick reads three files per container, and an ifstream with a
// stringstream costs twice the system calls and allocations (bench P9).
StatusOr<std::string> ReadControlFile(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      return NotFoundError(fmt::format("{}: does not exist (the cgroup is gone)", file));
    }
    return DataLossError(fmt::format("{}: cannot be read: {}", file, ErrnoText(errno)));
  }
  std::string content;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return DataLossError(fmt::format("{}: cannot be read: {}", file, ErrnoText(err)));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return content;
}

StatusOr<uint64_t> ReadCounter(const std::string& file) {
  QRM_ASSIGN_OR_RETURN(const std::string content, ReadControlFile(file));
  return ParseCounter(content, file);
}

uint64_t WorkingSet(uint64_t usage, uint64_t inactive_file) {
  return usage > inactive_file ? usage - inactive_file : 0;
}

}  // namespace

StatusOr<uint64_t> StatField(const std::string& content, const std::string& key,
                             const std::string& file) {
  std::istringstream lines(content);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.compare(0, space, key) != 0 || space != key.size()) {
      continue;
    }
    return ParseCounter(std::string_view(line).substr(space + 1), fmt::format("{} {}", file, key));
  }
  return DataLossError(fmt::format("{}: no {} line", file, key));
}

CgroupVersion DetectCgroupVersion(const std::string& root) {
  return Exists(root + "/cgroup.controllers") ? CgroupVersion::kV2 : CgroupVersion::kV1;
}

CgroupReader::CgroupReader(std::string root, CgroupVersion version)
    : root_(std::move(root)), version_(version) {}

StatusOr<uint64_t> CgroupReader::CpuV1(const std::string& path) const {
  // Where cpuacct is mounted does not change while we run: decided once, on the first read
  // (a separate cpuacct hierarchy, else cpu and cpuacct mounted together).
  if (cpuacct_dir_.empty()) {
    cpuacct_dir_ =
        Exists(root_ + "/cpuacct") || !Exists(root_ + "/cpu,cpuacct") ? "/cpuacct" : "/cpu,cpuacct";
  }
  return ReadCounter(root_ + cpuacct_dir_ + path + "/cpuacct.usage");
}

StatusOr<CgroupCounters> CgroupReader::Read(const std::string& path) const {
  CgroupCounters c;
  if (version_ == CgroupVersion::kV2) {
    const std::string dir = root_ + path;
    QRM_ASSIGN_OR_RETURN(const std::string cpu_stat, ReadControlFile(dir + "/cpu.stat"));
    QRM_ASSIGN_OR_RETURN(const uint64_t usage_us,
                         StatField(cpu_stat, "usage_usec", dir + "/cpu.stat"));
    c.cpu_usage_ns = usage_us * 1000;
    QRM_ASSIGN_OR_RETURN(const uint64_t current, ReadCounter(dir + "/memory.current"));
    QRM_ASSIGN_OR_RETURN(const std::string memory_stat, ReadControlFile(dir + "/memory.stat"));
    QRM_ASSIGN_OR_RETURN(const uint64_t inactive,
                         StatField(memory_stat, "inactive_file", dir + "/memory.stat"));
    c.memory_working_set = WorkingSet(current, inactive);
    return c;
  }
  QRM_ASSIGN_OR_RETURN(c.cpu_usage_ns, CpuV1(path));
  const std::string memory = root_ + "/memory" + path;
  QRM_ASSIGN_OR_RETURN(const uint64_t usage, ReadCounter(memory + "/memory.usage_in_bytes"));
  QRM_ASSIGN_OR_RETURN(const std::string stat, ReadControlFile(memory + "/memory.stat"));
  QRM_ASSIGN_OR_RETURN(const uint64_t inactive,
                       StatField(stat, "total_inactive_file", memory + "/memory.stat"));
  c.memory_working_set = WorkingSet(usage, inactive);
  return c;
}

}  // namespace qrm::advisor
