// Cheap, non-throwing probes the scale benchmarks poll while a process starts: an HTTP GET
// on loopback, whether a unix socket accepts connections, a process's /proc status fields
// and a Prometheus sample from a /metrics text. Benchmark-only code.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <sys/types.h>

namespace qrm::bench {

struct HttpResponse {
  int status = 0;  // 0: no connection or no HTTP answer
  std::string body;
};

// GET http://127.0.0.1:<port><path> (HTTP/1.1, Connection: close).
HttpResponse HttpGet(int port, const std::string& path,
                     std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Whether something listens on the unix socket `path` (a connect succeeds).
bool UnixSocketAccepts(const std::string& path);

// A loopback TCP port nothing listens on right now (bind to port 0, then close).
int FreeLoopbackPort();

// The number of a "Name:   123 kB" line of /proc/<pid>/<file>: KiB for status's VmRSS,
// VmHWM and smaps_rollup's Pss, a count for status's Threads; nullopt if absent.
std::optional<long> ProcNumber(pid_t pid, const std::string& field,
                               const std::string& file = "status");

// The value of the sample named exactly `name` (labels included, e.g.
// "qrm_reconcile_duration_seconds_count") in a Prometheus text exposition, or nullopt.
std::optional<double> MetricValue(const std::string& metrics_text, const std::string& name);

}  // namespace qrm::bench
