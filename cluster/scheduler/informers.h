// ExtenderInformers: what the extender learns from the Kubernetes API (docs/scheduling.md,
// "What the extender watches"): three reflectors (cluster/kube/reflector.h), each keeping the
// ExtenderService in step with one collection:
//  * nodes (/api/v1/nodes): allocatable and Koordinator's node annotations; needed when
//    kube-scheduler sends node names only (nodeCacheCapable: true);
//  * NodeMetrics (/apis/slo.koordinator.sh/v1alpha1/nodemetrics): the load qrm-advisor or
//    koordlet reports;
//  * pods (/api/v1/pods): where pods were placed, for the estimation of pods the metrics do
//    not show yet.
// An object that does not decode is counted, logged (rate-limited) and never applied: a
// NodeMetric that cannot be read removes the node's metric (the node is then judged as one
// without a metric, never as an idle one).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cluster/kube/kube_client.h"
#include "cluster/kube/reflector.h"
#include "cluster/scheduler/extender_service.h"

namespace qrm::cluster::scheduler {

inline constexpr char kNodesPath[] = "/api/v1/nodes";
inline constexpr char kPodsPath[] = "/api/v1/pods";

struct InformerOptions {
  bool watch_nodes = true;  // off: every request must carry Node objects
  std::chrono::seconds min_watch_timeout{300};
  int64_t page_size = 500;
};

struct InformerState {
  std::string resource;  // "nodes", "nodemetrics", "pods"
  kube::ReflectorCounters counters;
  uint64_t undecodable = 0;
};

class ExtenderInformers {
 public:
  // `service` must outlive this.
  ExtenderInformers(const kube::KubeClient& client, ExtenderService& service,
                    InformerOptions options = {});
  ~ExtenderInformers();  // stops
  ExtenderInformers(const ExtenderInformers&) = delete;
  ExtenderInformers& operator=(const ExtenderInformers&) = delete;

  void Start();
  void Stop();
  // Every reflector delivered its first list.
  bool Synced() const;
  bool WaitSynced(std::chrono::milliseconds timeout) const;
  std::vector<InformerState> State() const;

  class Handler;

 private:
  std::vector<std::unique_ptr<Handler>> handlers_;
  std::vector<std::unique_ptr<kube::Reflector>> reflectors_;
};

}  // namespace qrm::cluster::scheduler
