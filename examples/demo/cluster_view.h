// The demo's cluster step: an API server inside the demo (no control plane exists on this
// machine) that qrm-advisor publishes this node's NodeMetric, NodeResourceTopology and the
// plugins' extended resources to, and qrm-scheduler-extender watching it and answering
// kube-scheduler's filter and prioritize verbs for a pod.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "testing/child_process.h"
#include "testing/kube/object_collection.h"
#include "testing/kube/test_api_server.h"

namespace qrm::demo {

inline constexpr char kNodeName[] = "demo-node";

class ClusterView {
 public:
  // Starts the API server with this machine's Node object; `dir` holds the kubeconfig and logs.
  explicit ClusterView(std::string dir);
  ~ClusterView();

  bool started() const { return started_; }
  // What qrm-advisor needs to publish to it.
  std::vector<std::string> AdvisorFlags() const;
  // Waits for the objects, prints them, starts the extender, prints its answers for a pod.
  bool Show(const std::string& extender_binary);

 private:
  bool WaitForReport();
  void PrintReport() const;
  bool AskExtender();

  std::string dir_;
  testing::TestApiServer server_;
  testing::ObjectCollection nodes_;
  testing::ObjectCollection metrics_;
  testing::ObjectCollection topologies_;
  testing::ObjectCollection pods_;
  bool started_ = false;
  int port_ = 0;
  std::unique_ptr<testing::ChildProcess> extender_;
};

}  // namespace qrm::demo
