// A whole qrm node for the scale benchmarks, as production runs it: a private real
// containerd (testing/e2e), the qrm-host binary in front of it and the real
// qrm-cpu-plugin, qrm-memory-plugin and qrm-nic-plugin processes on this machine's topology.
// Like tests/e2e/host/node_fixture.h, without Catch2: errors are Status values, so a
// benchmark can report them and still clean up. Needs root (containerd).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/admin_v1.grpc.pb.h"
#include "common/status.h"
#include "testing/child_process.h"
#include "testing/e2e/containerd.h"
#include "testing/e2e/cri_client.h"
#include "testing/temp_dir.h"

namespace qrm::bench {

struct BenchNodeOptions {
  std::string host_log_level = "info";  // qrm-host runs as in production
  std::chrono::milliseconds reconcile_period{1000};
};

// How long a qrm-host start took, from just before the exec.
struct HostStartTimes {
  double socket_ms = 0;  // the CRI socket answered a Version call (through to containerd)
  double ready_ms = 0;   // GET /readyz answered 200
};

class BenchNode {
 public:
  // Starts containerd, the three plugins and qrm-host; returns once the host is ready and
  // every plugin registered and healthy.
  static StatusOr<std::unique_ptr<BenchNode>> Start(BenchNodeOptions options = {});
  // Stops qrm (host first) and containerd, which removes every container and sandbox.
  ~BenchNode();
  BenchNode(const BenchNode&) = delete;
  BenchNode& operator=(const BenchNode&) = delete;

  e2e::CriClient Shim() const;
  e2e::CriClient Direct() const;
  e2e::Containerd& containerd() { return *containerd_; }

  pid_t host_pid() const { return host_->pid(); }
  int metrics_port() const { return metrics_port_; }
  std::string File(const std::string& name) const { return dir_.File(name); }

  // SIGKILLs qrm-host, starts it again with the same flags and times the start (polling
  // every millisecond), then waits until the plugins are healthy again.
  StatusOr<HostStartTimes> KillAndRestartHost();

  StatusOr<admin::v1::ListAllocationsResponse> Allocations();
  // Number of registered plugins in state "healthy".
  StatusOr<int> HealthyPlugins();
  // Count of completed reconcile ticks (qrm_reconcile_duration_seconds_count), or an error
  // when /metrics cannot be read.
  StatusOr<long> ReconcileTicks();
  // Waits until `n` more reconcile ticks than now have completed.
  Status WaitReconcileTicks(int n);

  // The last `bytes` of each qrm log, for error reports.
  std::string LogTails(size_t bytes = 2000) const;
  // Stops everything; returns what containerd had to force (see Containerd::Stop).
  std::vector<std::string> Stop();

 private:
  explicit BenchNode(BenchNodeOptions options) : options_(std::move(options)) {}
  void StartPlugins();
  std::vector<std::string> HostArgv() const;
  // Execs qrm-host and polls until it serves; times measured from just before the exec.
  StatusOr<HostStartTimes> StartHostTimed();
  Status WaitPluginsHealthy();

  BenchNodeOptions options_;
  testing::TempDir dir_;
  std::unique_ptr<e2e::Containerd> containerd_;
  std::map<std::string, std::unique_ptr<testing::ChildProcess>> plugins_;
  std::unique_ptr<testing::ChildProcess> host_;
  int metrics_port_ = 0;
};

}  // namespace qrm::bench
