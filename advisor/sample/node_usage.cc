#include "advisor/sample/node_usage.h"

#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "advisor/sample/counter_text.h"

namespace qrm::advisor {
namespace {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return DataLossError(fmt::format("{}: cannot be read", path));
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

Status TicksOverflow() {
  return DataLossError("/proc/stat: cpu line: the ticks add up to more than 64 bits");
}

}  // namespace

Status ParseProcStat(const std::string& content, NodeCounters& out) {
  static constexpr const char* kFields[] = {"user",   "nice", "system",  "idle",
                                            "iowait", "irq",  "softirq", "steal"};
  std::istringstream lines(content);
  bool total = false;
  out.cpus = 0;
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string_view> w = Words(line);
    if (w.empty() || !w[0].starts_with("cpu")) continue;
    if (w[0] != "cpu") {
      ++out.cpus;
      continue;
    }
    if (w.size() < 9) {
      return DataLossError(
          fmt::format("/proc/stat: cpu line has {} fields, not >= 8", w.size() - 1));
    }
    uint64_t v[8];
    for (int i = 0; i < 8; ++i) {
      QRM_ASSIGN_OR_RETURN(v[i], ParseCounter(w[i + 1], fmt::format("/proc/stat: {}", kFields[i])));
    }
    // Sums in 64 bits: a real node needs millennia to come near, so a sum that wraps is a
    // damaged file, not a count (busy would then exceed total).
    uint64_t busy = 0, all = 0;
    for (int i : {0, 1, 2, 5, 6, 7}) {
      if (__builtin_add_overflow(busy, v[i], &busy)) return TicksOverflow();
    }
    if (__builtin_add_overflow(busy, v[3], &all) || __builtin_add_overflow(all, v[4], &all)) {
      return TicksOverflow();
    }
    out.cpu_busy_ticks = busy;
    out.cpu_total_ticks = all;
    total = true;
  }
  if (!total) return DataLossError("/proc/stat: no cpu line");
  if (out.cpus == 0) return DataLossError("/proc/stat: no cpuN line");
  return Status::Ok();
}

Status ParseMeminfo(const std::string& content, NodeCounters& out) {
  std::istringstream lines(content);
  bool total = false, available = false;
  for (std::string line; std::getline(lines, line);) {
    const std::vector<std::string_view> w = Words(line);
    if (w.size() < 2) continue;
    const bool is_total = w[0] == "MemTotal:", is_available = w[0] == "MemAvailable:";
    if (!is_total && !is_available) continue;
    if (w.size() != 3 || w[2] != "kB") {
      return DataLossError(
          fmt::format("/proc/meminfo: {}: invalid line \"{}\" (N kB)", w[0], line));
    }
    QRM_ASSIGN_OR_RETURN(const uint64_t kib,
                         ParseCounter(w[1], fmt::format("/proc/meminfo: {}", w[0])));
    if (kib > std::numeric_limits<uint64_t>::max() / 1024) {
      return DataLossError(
          fmt::format("/proc/meminfo: {}: {} kB overflows 64 bits of bytes", w[0], kib));
    }
    (is_total ? out.memory_total : out.memory_available) = kib * 1024;
    (is_total ? total : available) = true;
  }
  if (!total || !available) {
    return DataLossError("/proc/meminfo: MemTotal or MemAvailable is missing");
  }
  return Status::Ok();
}

StatusOr<NodeCounters> ReadNodeCounters(const std::string& procfs_root) {
  NodeCounters c;
  QRM_ASSIGN_OR_RETURN(const std::string stat, ReadFile(procfs_root + "/stat"));
  QRM_RETURN_IF_ERROR(ParseProcStat(stat, c));
  QRM_ASSIGN_OR_RETURN(const std::string meminfo, ReadFile(procfs_root + "/meminfo"));
  QRM_RETURN_IF_ERROR(ParseMeminfo(meminfo, c));
  return c;
}

std::optional<double> NodeCoresUsed(const NodeCounters& before, const NodeCounters& after) {
  if (after.cpu_total_ticks <= before.cpu_total_ticks ||
      after.cpu_busy_ticks < before.cpu_busy_ticks) {
    return std::nullopt;
  }
  const double busy = static_cast<double>(after.cpu_busy_ticks - before.cpu_busy_ticks);
  const double total = static_cast<double>(after.cpu_total_ticks - before.cpu_total_ticks);
  return busy / total * after.cpus;
}

}  // namespace qrm::advisor
