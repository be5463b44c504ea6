// A small cluster for the scheduling tests, with no control plane and no containerd: the
// in-process API server (nodes, NodeMetrics, pods), and per node a qrm-advisor process that
// samples a fake procfs whose CPU and memory load the test sets (the /proc/stat counters move
// as a node `load_cores` busy would make them move), and publishes its NodeMetric.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "testing/child_process.h"
#include "testing/kube/object_collection.h"
#include "testing/kube/test_api_server.h"
#include "testing/temp_dir.h"

namespace qrm::testing {

struct FakeNodeSpec {
  std::string name;
  int cpus = 16;
  double load_cores = 0;  // node CPU usage the advisor will see
  int64_t memory_gib = 64;
  int64_t used_memory_gib = 0;
};

class FakeCluster {
 public:
  // Starts the API server and seeds the Node objects.
  explicit FakeCluster(std::vector<FakeNodeSpec> nodes);
  ~FakeCluster();  // stops the advisors, the load writer and the server

  // Starts one qrm-advisor per node (binary `advisor`), publishing to the API server.
  void StartAdvisors(const std::string& advisor);
  // Waits until every node's NodeMetric shows a node CPU usage (timeout in seconds).
  bool WaitForNodeMetrics(int timeout_s);

  const std::string& kubeconfig() const { return kubeconfig_; }
  std::string LogOf(const std::string& node) const;  // the advisor's log
  TestApiServer& server() { return server_; }
  ObjectCollection& nodes() { return nodes_; }
  ObjectCollection& node_metrics() { return metrics_; }
  ObjectCollection& pods() { return pods_; }
  const TempDir& dir() const { return dir_; }

 private:
  void WriteCounters(double seconds);

  TempDir dir_;
  std::vector<FakeNodeSpec> specs_;
  TestApiServer server_;
  ObjectCollection nodes_;
  ObjectCollection metrics_;
  ObjectCollection pods_;
  std::string kubeconfig_;
  std::vector<std::unique_ptr<ChildProcess>> advisors_;
  std::atomic<bool> stop_{false};
  std::thread load_writer_;
};

// A pod of `cpu_milli` and `memory_mib` requests (and the same limits), unscheduled.
std::string PendingPodJson(const std::string& ns, const std::string& name, int cpu_milli,
                           int memory_mib);

}  // namespace qrm::testing
