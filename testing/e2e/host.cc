#include "testing/e2e/host.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

namespace qrm::e2e {
namespace fs = std::filesystem;
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string oct = s.substr(i + 1, 3);
      if (oct.find_first_not_of("01234567") == std::string::npos) {
        out.push_back(static_cast<char>(std::stoi(oct, nullptr, 8)));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool IsUnder(const std::string& path, const std::string& dir) {
  if (path == dir) return true;
  const std::string prefix = dir.back() == '/' ? dir : dir + "/";
  return path.compare(0, prefix.size(), prefix) == 0;
}

bool HasOption(const std::string& options, const std::string& option) {
  std::istringstream in(options);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == option) return true;
  }
  return false;
}

std::string ProcState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return {};
  return line.substr(close + 2, 1);
}

}  // namespace

std::vector<MountEntry> ReadMounts(const std::string& mountinfo) {
  std::vector<MountEntry> mounts;
  std::ifstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    std::string field;
    while (fields >> field) f.push_back(field);
    // id parent major:minor root mount_point options [optional...] - fstype source super
    const auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || dash + 3 > f.end()) continue;
    MountEntry m;
    m.mount_point = Unescape(f[4]);
    m.fs_type = *(dash + 1);
    m.source = Unescape(*(dash + 2));
    if (dash + 3 < f.end()) m.super_options = *(dash + 3);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

std::vector<std::string> MountPointsUnder(const std::string& dir) {
  std::vector<std::string> result;
  for (const MountEntry& m : ReadMounts()) {
    if (IsUnder(m.mount_point, dir)) result.push_back(m.mount_point);
  }
  return result;
}

int UnmountAllUnder(const std::string& dir) {
  std::vector<std::string> points = MountPointsUnder(dir);
  // Later mounts may sit on top of earlier ones: undo them in reverse order.
  int count = 0;
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if (::umount2(it->c_str(), MNT_DETACH) == 0) ++count;
  }
  return count;
}

std::string CgroupV1Mount(const std::string& controller) {
  for (const MountEntry& m : ReadMounts()) {
    if (m.fs_type == "cgroup" && HasOption(m.super_options, controller)) return m.mount_point;
  }
  return {};
}

std::vector<std::string> CgroupMounts() {
  std::vector<std::string> result;
  for (const MountEntry& m : ReadMounts()) {
    if (m.fs_type == "cgroup" || m.fs_type == "cgroup2") result.push_back(m.mount_point);
  }
  return result;
}

StatusOr<std::string> ProcessCgroup(pid_t pid, const std::string& controller) {
  const std::string file = "/proc/" + std::to_string(pid) + "/cgroup";
  std::ifstream in(file);
  if (!in) return NotFoundError("cannot open " + file);
  std::string line;
  while (std::getline(in, line)) {
    // hierarchy-id:controller-list:path
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    if (HasOption(line.substr(first + 1, second - first - 1), controller)) {
      return line.substr(second + 1);
    }
  }
  return NotFoundError("no " + controller + " cgroup in " + file);
}

std::vector<std::string> RemoveCgroupTree(const std::string& relative) {
  std::vector<std::string> left;
  if (relative.empty() || relative == "/") return left;
  for (const std::string& mount : CgroupMounts()) {
    const std::string top = mount + relative;
    std::error_code ec;
    if (!fs::is_directory(top, ec)) continue;
    // Deepest first: collect every directory, then remove them in reverse pre-order.
    std::vector<std::string> dirs{top};
    for (auto it = fs::recursive_directory_iterator(top, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec)) dirs.push_back(it->path());
    }
    for (auto dir = dirs.rbegin(); dir != dirs.rend(); ++dir) {
      bool removed = false;
      for (int attempt = 0; attempt < 100 && !removed; ++attempt) {
        if (::rmdir(dir->c_str()) == 0 || errno == ENOENT) {
          removed = true;
          break;
        }
        // Busy: processes may still be in it. Kill them, give the kernel a moment, retry.
        std::ifstream procs(*dir + "/cgroup.procs");
        pid_t pid = 0;
        while (procs >> pid) ::kill(pid, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (!removed) left.push_back(*dir);
    }
  }
  return left;
}

std::vector<pid_t> PidsWithArgument(const std::string& arg) {
  std::vector<pid_t> result;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string item;
    bool match = false;
    while (std::getline(in, item, '\0')) {
      if (item == arg) match = true;
    }
    const pid_t pid = static_cast<pid_t>(std::stoi(name));
    if (match && ProcessAlive(pid)) result.push_back(pid);
  }
  return result;
}

bool ProcessAlive(pid_t pid) {
  const std::string state = ProcState(pid);
  return !state.empty() && state != "Z" && state != "X";
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

}  // namespace qrm::e2e
