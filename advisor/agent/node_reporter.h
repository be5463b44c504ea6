// NodeReporter: this node's NodeMetric and NodeResourceTopology (docs/node-report.md, "In
// qrm-advisor"). Every `check_period_s` after a tick it builds
//  * the NodeMetric status from the agent's state (advisor/report/node_metric_builder.h),
//  * the NodeResourceTopology from qrm-host's answers (advisor/report/nrt_builder.h),
// and keeps both objects for the HTTP endpoints and `qrmctl nodemetric`. When publishing is on
// it hands what is due to a writer thread that creates or updates the objects in the
// Kubernetes API (cluster/objects/object_writer.h), so a slow or absent API server never
// delays sampling: the NodeMetric as its schedule says (report_schedule.h), the topology when
// it changed and at least every `topology_refresh_s`, and at every check the node's extended
// resources (extended_resource_publisher.h) from the same answers. Writes are counted by
// result; a failure is logged once per distinct error (with the server's answer) and retried at
// the next check.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "advisor/agent/agent.h"
#include "advisor/agent/extended_resource_publisher.h"
#include "advisor/agent/host_view.h"
#include "advisor/report/node_metric_builder.h"
#include "advisor/report/report_schedule.h"
#include "cluster/kube/kube_client.h"
#include "cluster/objects/node_metric.h"
#include "common/log.h"
#include "common/mutex.h"

namespace qrm::advisor {

struct NodeReporterOptions {
  std::string node_name;  // the objects' name: the Kubernetes node's
  int64_t check_period_s = 10;
  int64_t topology_refresh_s = 600;  // the topology is rewritten at least this often
  // Where the extended resources qrm published are remembered ("": in memory only).
  std::string extended_resources_file;
  NodeReportOptions report;
  ReportScheduleOptions schedule;
};

// How writing one kind of object goes.
struct ObjectWrites {
  uint64_t ok = 0, failed = 0, conflicts = 0;
  std::string last_error;
  int64_t last_written = 0;  // Unix seconds of the report written last (0: never)
};

struct NodeReporterCounters {
  uint64_t built = 0;
  ObjectWrites node_metric, topology;
  ObjectWrites extended_resources;  // ok: patches accepted; failed: checks that failed
  std::set<std::string> published;  // the extended resources qrm publishes on the node
};

// qrm-host's answers, for the topology (HostClient::FetchAnswers in the daemon).
using HostAnswersSource = std::function<StatusOr<HostAnswers>()>;

class NodeReporter {
 public:
  // `client`: where to publish (nullopt: served locally only); `host`: null builds no topology.
  NodeReporter(NodeReporterOptions options, std::optional<kube::KubeClient> client,
               HostAnswersSource host = {});
  ~NodeReporter();  // stops the writer
  NodeReporter(const NodeReporter&) = delete;
  NodeReporter& operator=(const NodeReporter&) = delete;

  // After each agent tick, at `now` (Unix seconds). One caller thread.
  void Tick(const Agent& agent, int64_t now);
  // The objects as last built (JSON); "" before the first build.
  std::string Json() const;
  std::string TopologyJson() const;
  std::string topology_error() const;  // why the last topology build failed ("" if it did not)
  NodeReporterCounters counters() const;
  bool publishing() const { return client_.has_value(); }
  const std::string& node_name() const { return options_.node_name; }

 private:
  // A write handed to the writer thread.
  struct Pending {
    int64_t report_time = 0;
    std::string status;                                  // the NodeMetric's status member
    std::map<std::string, std::string> members;          // the topology's zones and attributes
    std::optional<cluster::ExtendedResources> extended;  // the node's, from the same answers
  };
  // False when the node has not been sampled yet (nothing built).
  bool BuildNodeMetric(const Agent& agent, int64_t now);
  void BuildTopology(int64_t now);
  void WriterLoop();
  void WriteNodeMetric(const Pending& p);
  void WriteTopology(const Pending& p);
  void QueueExtendedResources(int64_t now, const admin::v1::GetAllocatableResponse& allocatable);
  void SkipNames(const std::vector<std::string>& names);  // logged once each
  void CheckExtendedResources(int64_t time, const cluster::ExtendedResources& desired);
  void Count(ObjectWrites& w, const char* what, const Status& s, int conflicts, int64_t time)
      QRM_REQUIRES(mu_);

  const NodeReporterOptions options_;
  const std::optional<kube::KubeClient> client_;
  const HostAnswersSource host_;
  std::shared_ptr<spdlog::logger> log_;
  // The Tick thread's.
  ReportSchedule schedule_;
  int64_t last_build_ = 0;
  std::string topology_written_;  // zones + attributes last handed to the writer
  int64_t topology_written_at_ = 0;
  std::set<std::string> skipped_names_;  // plugin resources not published, logged once
  // The writer thread's (made before it starts).
  std::unique_ptr<ExtendedResourcePublisher> publisher_;

  mutable Mutex mu_;
  std::condition_variable wake_;
  std::string json_ QRM_GUARDED_BY(mu_);
  std::string topology_json_ QRM_GUARDED_BY(mu_);
  std::string topology_error_ QRM_GUARDED_BY(mu_);
  std::optional<Pending> metric_to_write_ QRM_GUARDED_BY(mu_);
  std::optional<Pending> topology_to_write_ QRM_GUARDED_BY(mu_);
  std::optional<Pending> extended_to_check_ QRM_GUARDED_BY(mu_);
  bool metric_retry_ QRM_GUARDED_BY(mu_) = false;    // the last NodeMetric write failed
  bool topology_retry_ QRM_GUARDED_BY(mu_) = false;  // the last topology write failed
  NodeReporterCounters counters_ QRM_GUARDED_BY(mu_);
  bool stop_ QRM_GUARDED_BY(mu_) = false;
  std::thread writer_;
};

// The report input from the agent's state (containers grouped into pods, the store's series).
NodeReportInput ReportInputFrom(const AgentState& state, const std::string& node_name, int64_t now);

}  // namespace qrm::advisor
