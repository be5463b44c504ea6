// Fuzzes the parsers of the kernel's usage files the advisor samples (advisor/sample): the
// "key value" lines of cgroup memory.stat / cpu.stat, /proc/stat and /proc/meminfo. A
// container's cgroup files are written by the kernel, but a fake tree (--cgroup-root,
// --procfs-root) or a future kernel may hold anything.
//
// Input: the first byte selects the parser (byte % 3: stat field, /proc/stat, /proc/meminfo),
// the rest is the file. Properties beyond "does not crash":
//  * every error is kDataLoss (a file that is not as the kernel writes it);
//  * an accepted /proc/stat has busy <= total ticks and at least one CPU, and cores used
//    between it and itself are none (counters must advance);
//  * an accepted /proc/meminfo leaves both fields set (a second parse agrees);
//  * a stat field that parses appears in the input as "<key> <value>".
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "advisor/sample/cgroup_usage.h"
#include "advisor/sample/node_usage.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "usage_files_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

void CheckError(const qrm::Status& s) {
  Check(s.ok() || s.code() == qrm::StatusCode::kDataLoss, "an error is not kDataLoss");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string content(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      auto v = qrm::advisor::StatField(content, "inactive_file", "memory.stat");
      CheckError(v.status());
      if (v.ok()) {
        Check(content.find("inactive_file ") != std::string::npos,
              "a stat field parsed from an input without it");
        auto again = qrm::advisor::StatField(content, "inactive_file", "memory.stat");
        Check(again.ok() && *again == *v, "two parses disagree");
      }
      break;
    }
    case 1: {
      qrm::advisor::NodeCounters c;
      const qrm::Status s = qrm::advisor::ParseProcStat(content, c);
      CheckError(s);
      if (s.ok()) {
        Check(c.cpu_busy_ticks <= c.cpu_total_ticks, "busy ticks above total ticks");
        Check(c.cpus >= 1, "accepted /proc/stat without a CPU");
        Check(!qrm::advisor::NodeCoresUsed(c, c), "cores used without advancing counters");
      }
      break;
    }
    default: {
      qrm::advisor::NodeCounters a, b;
      const qrm::Status s = qrm::advisor::ParseMeminfo(content, a);
      CheckError(s);
      if (s.ok()) {
        Check(qrm::advisor::ParseMeminfo(content, b).ok(), "a second parse fails");
        Check(a.memory_total == b.memory_total && a.memory_available == b.memory_available,
              "two parses disagree");
      }
    }
  }
  return 0;
}
