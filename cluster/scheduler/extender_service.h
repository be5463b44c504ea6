// ExtenderService: Koordinator's LoadAwareScheduling served as a kube-scheduler extender
// (docs/scheduling.md). It owns the decision core (loadaware::NodeLoadCache), fed by informers
// (nodes, NodeMetrics, pods), and answers the filter, prioritize and bind verbs.
//
// Nodes reach it two ways. An extender configured with nodeCacheCapable gets only node names:
// their Node objects must come from a node informer (UpsertNode), and a name it has never been
// given fails the filter with kUnknownNodeReason. Otherwise every request carries whole Node
// objects; one the informer has not given is judged from the request's object (upserted, and
// re-upserted when a later request carries a different object), so the extender also works with
// no node informer at all. An informer's Node always wins over a request's.
//
// A node whose input is bad (a NodeMetric that cannot be converted; the decision core's own
// checks, docs/loadaware-cases.md) gets an error verdict: a failed node in the filter, 0 in
// prioritize, never scored as an idle node.
//
// Thread safety: every method may be called from any thread. One mutex guards the node and pod
// tables; the decision core has its own, and a request holds neither while it judges its nodes'
// load other than through the core.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cluster/extender/extender_types.h"
#include "cluster/loadaware/node_load_cache.h"
#include "cluster/objects/node_metric.h"
#include "cluster/scheduler/binding.h"
#include "cluster/scheduler/extender_metrics.h"
#include "cluster/scheduler/inputs.h"
#include "common/http/http_server.h"
#include "common/metrics/metrics.h"
#include "common/mutex.h"
#include "common/rate_limited_log.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace qrm::cluster::scheduler {

// The failed-node reason of a name a nodeCacheCapable request gives that no informer has.
inline constexpr std::string_view kUnknownNodeReason =
    "node(s) unknown to the load-aware extender (no Node object watched yet)";

// framework.MaxNodeScore: the load-aware score's range, scaled to kMaxExtenderPriority.
inline constexpr int64_t kMaxLoadAwareScore = 100;

// Pods seen in filter requests and not bound yet, kept for the bind verb; the oldest go first.
inline constexpr size_t kMaxUnboundPods = 4096;

struct ExtenderServiceOptions {
  metrics::Registry* registry = nullptr;        // nullptr: metrics::Default()
  std::function<loadaware::TimePoint()> clock;  // empty: the system clock
};

class ExtenderService {
 public:
  // `args` as ReadLoadAwareArgsFile returns them (defaulted and validated).
  static StatusOr<std::unique_ptr<ExtenderService>> Create(loadaware::LoadAwareArgs args,
                                                           ExtenderServiceOptions options = {});

  // ---- Informer events ----
  void UpsertNode(const extender::Node& node) QRM_EXCLUDES(mu_);
  void RemoveNode(std::string_view name) QRM_EXCLUDES(mu_);
  // A NodeMetric that cannot be converted (NodeMetricInputFrom) makes its node an error.
  void UpsertNodeMetric(const NodeMetric& metric) QRM_EXCLUDES(mu_);
  void RemoveNodeMetric(std::string_view node_name) QRM_EXCLUDES(mu_);
  // Pods of every phase; the pod's previous node is remembered, so a node change moves its load.
  void UpsertPod(const extender::Pod& pod) QRM_EXCLUDES(mu_);
  // `pod` is the UID, or "namespace/name".
  void RemovePod(std::string_view pod) QRM_EXCLUDES(mu_);

  // ---- Verbs ----
  // Answers in the form asked: Nodes (each node's JSON as received) or NodeNames. Failed nodes
  // carry Koordinator's reason texts. A request without a pod or without nodes, or a pod whose
  // quantities are bad, sets Error (kube-scheduler then fails the pod's scheduling attempt).
  extender::ExtenderFilterResult Filter(const extender::ExtenderArgs& args) QRM_EXCLUDES(mu_);
  // Score 0..kMaxExtenderPriority per node: the load-aware score * 10 / 100, truncated.
  // kInvalidArgument for the request errors Filter sets Error for.
  StatusOr<extender::HostPriorityList> Prioritize(const extender::ExtenderArgs& args)
      QRM_EXCLUDES(mu_);
  // What to POST to bind, and the pod assumed on the node at once (when the extender knows it),
  // so a burst of pods is estimated before the pod informer reports them. kInvalidArgument for
  // empty names. FinishBind must follow with the call's result: a failure unassumes the pod.
  StatusOr<BindPlan> PlanBind(const extender::ExtenderBindingArgs& args) QRM_EXCLUDES(mu_);
  void FinishBind(const extender::ExtenderBindingArgs& args, const Status& result)
      QRM_EXCLUDES(mu_);

  // ---- HTTP: request body in, response out (application/json) ----
  // Always 200: a body that does not decode sets ExtenderFilterResult.Error.
  http::Response HandleFilter(std::string_view body);
  // 200 with a HostPriorityList; 400 (text) when the body or its pod is bad: kube-scheduler
  // then ignores this extender's scores for the pod.
  http::Response HandlePrioritize(std::string_view body);
  // POSTs through `post` (the API call, returning its status); always 200 with an
  // ExtenderBindingResult whose Error says what failed.
  using BindPoster = std::function<Status(const BindPlan&)>;
  http::Response HandleBind(std::string_view body, const BindPoster& post);

  const loadaware::NodeLoadCache& cache() const { return *cache_; }
  // Nodes known (informer or requests) and pods tracked, for /debug and tests.
  size_t NodeCount() const QRM_EXCLUDES(mu_);
  size_t PodCount() const QRM_EXCLUDES(mu_);

 private:
  struct NodeEntry {
    bool from_informer = false;
    std::string json;  // a request node's object, to see when a later request changes it
  };
  struct PodEntry {
    std::string node;      // the node the cache counts the pod on ("" while unassigned)
    std::string key;       // namespace/name
    bool assumed = false;  // placed by PlanBind, not yet confirmed by the informer
  };

  ExtenderService(std::unique_ptr<loadaware::NodeLoadCache> cache, ExtenderServiceOptions options);

  loadaware::TimePoint Now() const;
  void LogWarnings(std::string_view object, const Warnings& warnings);
  // The request's node names; the Nodes form upserts nodes no informer gave.
  std::vector<std::string> RequestNodes(const extender::ExtenderArgs& args) QRM_EXCLUDES(mu_);
  void RememberUnbound(const loadaware::PodInput& pod) QRM_EXCLUDES(mu_);
  // For each name: OK, or why the node is an error whatever the core says (unknown, bad metric).
  std::vector<Status> NodeProblems(const std::vector<std::string>& names) const QRM_EXCLUDES(mu_);
  // The request's pod, or why the request cannot be answered (no pod, no nodes).
  StatusOr<loadaware::PodInput> RequestPod(const extender::ExtenderArgs& args);
  extender::ExtenderFilterResult FilterImpl(const extender::ExtenderArgs& args);
  StatusOr<extender::HostPriorityList> PrioritizeImpl(const extender::ExtenderArgs& args);
  std::string FindPodUid(std::string_view pod) const QRM_REQUIRES(mu_);
  void ErasePod(const std::string& uid) QRM_REQUIRES(mu_);

  const std::unique_ptr<loadaware::NodeLoadCache> cache_;
  const std::function<loadaware::TimePoint()> clock_;
  ExtenderMetrics metrics_;
  // Bad input repeats with every request and event that carries it: its lines are limited.
  RateLimitedLog input_log_;

  mutable Mutex mu_;
  std::unordered_map<std::string, NodeEntry> nodes_ QRM_GUARDED_BY(mu_);
  // Nodes whose NodeMetric could not be converted, with why.
  std::unordered_map<std::string, Status> bad_metrics_ QRM_GUARDED_BY(mu_);
  std::unordered_map<std::string, PodEntry> pods_ QRM_GUARDED_BY(mu_);                // by UID
  std::unordered_map<std::string, std::string> pod_uids_ QRM_GUARDED_BY(mu_);         // by ns/name
  std::unordered_map<std::string, loadaware::PodInput> unbound_ QRM_GUARDED_BY(mu_);  // by UID
  std::deque<std::string> unbound_order_ QRM_GUARDED_BY(mu_);
};

}  // namespace qrm::cluster::scheduler
