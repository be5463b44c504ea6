#include "advisor/discover/cgroup_path.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::advisor {
namespace {

constexpr std::string_view kSliceSuffix = ".slice";
constexpr std::string_view kDeletedSuffix = " (deleted)";
// PATH_MAX: a longer directory cannot be opened. Also bounds a slice's expansion, which grows
// with the square of its '-' count.
constexpr size_t kMaxPathBytes = 4096;

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Why `path` cannot name a cgroup directory below a hierarchy's root, or nothing: it must be
// "/" or "/c1/c2..." with no empty, "." or ".." component (so nothing outside the hierarchy
// can be named) and no control byte (a NUL would cut the path short where it is opened).
std::optional<std::string> PathProblem(std::string_view path) {
  if (path.empty() || path[0] != '/') return "does not start with '/'";
  for (const char c : path) {
    if (static_cast<unsigned char>(c) < 0x20) return "holds a control character";
  }
  if (path == "/") return std::nullopt;
  for (const std::string_view part : Split(path.substr(1), '/')) {
    if (part.empty()) return "has an empty component";
    if (part == "." || part == "..") return fmt::format("has a {} component", Quote(part));
  }
  return std::nullopt;
}

Status BadCgroupsPath(std::string_view value, std::string_view why) {
  return InvalidArgumentError(fmt::format("cgroupsPath {}: {}", Quote(value), why));
}

// runc's unit for `name`: the slice itself when it is one, else "<prefix>-<name>.scope".
StatusOr<std::string> SystemdUnit(std::string_view prefix, std::string_view name) {
  if (name.empty()) return InvalidArgumentError("the unit name is empty");
  if (name.find('/') != std::string_view::npos || prefix.find('/') != std::string_view::npos) {
    return InvalidArgumentError("a unit name or prefix holds '/'");
  }
  if (EndsWith(name, kSliceSuffix)) return std::string(name);
  return fmt::format("{}-{}.scope", prefix, name);
}

StatusOr<std::string> SystemdCgroupDir(std::string_view value,
                                       const std::vector<std::string_view>& parts) {
  // runc's default parent when the slice is left empty.
  const std::string_view slice = parts[0].empty() ? "system.slice" : parts[0];
  StatusOr<std::string> parent = ExpandSystemdSlice(slice);
  if (!parent.ok()) return BadCgroupsPath(value, parent.status().message());
  StatusOr<std::string> unit = SystemdUnit(parts[1], parts[2]);
  if (!unit.ok()) return BadCgroupsPath(value, unit.status().message());
  std::string dir = (*parent == "/" ? "" : *parent) + "/" + *unit;
  if (auto problem = PathProblem(dir)) return BadCgroupsPath(value, "unit " + *problem);
  return dir;
}

struct ProcCgroupLine {
  std::string_view hierarchy_id;
  std::string_view controllers;  // "cpu,cpuacct"; empty on the unified line
  std::string_view path;
};

// "N:controllers:/path"; the path itself may hold ':'.
std::optional<ProcCgroupLine> ParseProcCgroupLine(std::string_view line) {
  const size_t first = line.find(':');
  if (first == std::string_view::npos || first == 0) return std::nullopt;
  const size_t second = line.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  ProcCgroupLine parsed{line.substr(0, first), line.substr(first + 1, second - first - 1),
                        line.substr(second + 1)};
  for (const char c : parsed.hierarchy_id) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return parsed;
}

bool HoldsController(std::string_view controllers, std::string_view controller) {
  for (const std::string_view c : Split(controllers, ',')) {
    if (c == controller) return true;
  }
  return false;
}

// The chosen line's path, checked: a removed cgroup is kNotFound (its container is going
// away); "/.." means the process lies outside our cgroup namespace, where we cannot read it.
StatusOr<std::string> CheckedProcPath(std::string_view path, std::string_view line,
                                      std::string_view where) {
  if (EndsWith(path, kDeletedSuffix)) {
    return NotFoundError(fmt::format("{}: the cgroup was removed: {}", where, Quote(line)));
  }
  if (path == "/.." || path.substr(0, 4) == "/../") {
    return DataLossError(
        fmt::format("{}: {} lies outside this process's cgroup namespace", where, Quote(line)));
  }
  if (auto problem = PathProblem(path)) {
    return DataLossError(fmt::format("{}: line {}: the path {}", where, Quote(line), *problem));
  }
  return std::string(path);
}

}  // namespace

StatusOr<std::string> CgroupFromProcFile(std::string_view content, std::string_view controller,
                                         std::string_view where) {
  std::optional<ProcCgroupLine> unified;
  std::string_view unified_line;
  for (const std::string_view line : Split(content, '\n')) {
    if (line.empty()) continue;
    const std::optional<ProcCgroupLine> parsed = ParseProcCgroupLine(line);
    if (!parsed) {
      return DataLossError(fmt::format("{}: malformed line {} (expected \"N:controllers:/path\")",
                                       where, Quote(line)));
    }
    if (!controller.empty() && HoldsController(parsed->controllers, controller)) {
      return CheckedProcPath(parsed->path, line, where);
    }
    if (parsed->hierarchy_id == "0" && parsed->controllers.empty()) {
      unified = parsed;
      unified_line = line;
    }
  }
  if (!unified) {
    return NotFoundError(fmt::format(
        "{}: no line for {}", where,
        controller.empty() ? "the unified hierarchy" : Quote(controller) + " nor a unified one"));
  }
  return CheckedProcPath(unified->path, unified_line, where);
}

StatusOr<std::string> ProcessCgroup(const std::string& procfs_root, int64_t pid,
                                    std::string_view controller) {
  if (pid <= 0) return InvalidArgumentError(fmt::format("pid {}: not a process", pid));
  const std::string file = fmt::format("{}/{}/cgroup", procfs_root, pid);
  std::ifstream in(file);
  if (!in) {
    if (errno == ENOENT) return NotFoundError(fmt::format("{}: the process is gone", file));
    return ErrnoError(errno, "open", file);
  }
  std::ostringstream content;
  content << in.rdbuf();
  return CgroupFromProcFile(content.str(), controller, file);
}

StatusOr<std::string> ExpandSystemdSlice(std::string_view slice) {
  const auto bad = [slice](std::string_view why) {
    return InvalidArgumentError(fmt::format("slice {}: {}", Quote(slice), why));
  };
  if (!EndsWith(slice, kSliceSuffix)) return bad("does not end in \".slice\"");
  if (slice.find('/') != std::string_view::npos) return bad("holds '/'");
  const std::string_view name = slice.substr(0, slice.size() - kSliceSuffix.size());
  if (name == "-") return std::string("/");  // "-.slice" is the root slice
  std::string path;
  std::string prefix;
  for (const std::string_view component : Split(name, '-')) {
    if (component.empty()) return bad("has an empty component between '-'");
    path += fmt::format("/{}{}{}", prefix, component, kSliceSuffix);
    prefix += fmt::format("{}-", component);
    if (path.size() > kMaxPathBytes) return bad("expands to a path longer than 4096 bytes");
  }
  if (auto problem = PathProblem(path)) return bad(*problem);
  return path;
}

StatusOr<std::string> CgroupDirFromCgroupsPath(std::string_view cgroups_path) {
  if (cgroups_path.empty()) return BadCgroupsPath(cgroups_path, "is empty");
  if (cgroups_path.size() > kMaxPathBytes) {
    return BadCgroupsPath(cgroups_path, "is longer than 4096 bytes");
  }
  if (cgroups_path[0] == '/') {
    if (auto problem = PathProblem(cgroups_path)) return BadCgroupsPath(cgroups_path, *problem);
    return std::string(cgroups_path);
  }
  const std::vector<std::string_view> parts = Split(cgroups_path, ':');
  if (parts.size() == 3) return SystemdCgroupDir(cgroups_path, parts);
  return BadCgroupsPath(cgroups_path,
                        "neither an absolute cgroupfs path nor systemd's \"slice:prefix:name\" "
                        "(a relative path is resolved against the runtime's own cgroup)");
}

}  // namespace qrm::advisor
