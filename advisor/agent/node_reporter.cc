#include "advisor/agent/node_reporter.h"

#include <fmt/ranges.h>

#include "advisor/report/nrt_builder.h"
#include "cluster/objects/node_metric_json.h"
#include "cluster/objects/node_resource_topology.h"
#include "cluster/objects/object_writer.h"

namespace qrm::advisor {
namespace {

double Fraction(const cluster::ResourceMap& m, const char* resource, double capacity) {
  auto it = m.resources.find(resource);
  if (it == m.resources.end() || capacity <= 0) return 0;
  return it->second.AsDouble() / capacity;
}

// The objects qrm-advisor creates when none exists (a Koordinator controller or an NRT
// exporter may have made one: then only qrm's members are written).
cluster::NodeMetric NewNodeMetric(const std::string& node_name) {
  cluster::NodeMetric m;
  m.metadata.name = node_name;
  m.metadata.labels["app.kubernetes.io/managed-by"] = "qrm-advisor";
  return m;
}

}  // namespace

NodeReportInput ReportInputFrom(const AgentState& state, const std::string& node_name,
                                int64_t now) {
  NodeReportInput in;
  in.node_name = node_name;
  in.now = now;
  in.node_cpu_series = NodeSeries(Resource::kCpu);
  in.node_memory_series = NodeSeries(Resource::kMemory);
  in.system_cpu_series = SystemSeries(Resource::kCpu);
  in.system_memory_series = SystemSeries(Resource::kMemory);
  std::map<std::string, ReportPod> pods;  // by uid
  for (const TrackedContainer& c : state.containers) {
    ReportPod& pod = pods[c.pod_uid];
    pod.name = c.pod_name;
    pod.namespace_ = c.pod_namespace;
    if (pod.qos_level.empty()) pod.qos_level = c.qos_level;
    pod.cpu_series.push_back(ContainerSeries(c.Key(), Resource::kCpu));
    pod.memory_series.push_back(ContainerSeries(c.Key(), Resource::kMemory));
  }
  for (auto& [uid, pod] : pods) in.pods.push_back(std::move(pod));
  in.cpu_capacity = state.last_tick.cpu_capacity;
  in.memory_capacity = state.last_tick.memory_capacity;
  in.cpu = state.cpu;
  in.memory = state.memory;
  return in;
}

NodeReporter::NodeReporter(NodeReporterOptions options, std::optional<kube::KubeClient> client,
                           HostAnswersSource host)
    : options_(std::move(options)),
      client_(std::move(client)),
      host_(std::move(host)),
      log_(Logger("node-report")),
      schedule_(options_.schedule) {
  if (!client_) return;
  publisher_ = std::make_unique<ExtendedResourcePublisher>(*client_, options_.node_name,
                                                           options_.extended_resources_file);
  {
    MutexLock lock(mu_);
    counters_.published = publisher_->published();
  }
  writer_ = std::thread([this] { WriterLoop(); });
}

NodeReporter::~NodeReporter() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void NodeReporter::Tick(const Agent& agent, int64_t now) {
  if (last_build_ != 0 && now - last_build_ < options_.check_period_s) return;
  const bool built = BuildNodeMetric(agent, now);
  if (host_) BuildTopology(now);
  // Until the node has been sampled there is no NodeMetric: try again at the next tick.
  if (built) last_build_ = now;
}

bool NodeReporter::BuildNodeMetric(const Agent& agent, int64_t now) {
  NodeReportInput in;
  std::optional<cluster::NodeMetricStatus> status = agent.Read([&](const AgentState& s, auto&&...) {
    in = ReportInputFrom(s, options_.node_name, now);
    return advisor::BuildNodeMetric(s.store, in, options_.report);
  });
  if (!status) return false;  // the node has no sample in the window yet
  cluster::NodeMetric object = NewNodeMetric(options_.node_name);
  object.status = *status;
  const std::string json = cluster::EncodeNodeMetric(object);
  const auto& usage = status->node_metric->node_usage;
  const double cpu = Fraction(usage, "cpu", in.cpu_capacity);
  const double memory = Fraction(usage, "memory", in.memory_capacity);
  MutexLock lock(mu_);
  json_ = json;
  ++counters_.built;
  if (client_ && (metric_retry_ || schedule_.Due(now, cpu, memory))) {
    schedule_.Written(now, cpu, memory);
    metric_retry_ = false;
    metric_to_write_ = Pending{now, cluster::EncodeNodeMetricStatus(*status), {}};
    wake_.notify_one();
  }
  return true;
}

void NodeReporter::BuildTopology(int64_t now) {
  StatusOr<HostAnswers> answers = host_();  // outside the lock: qrm-host may be slow
  // Only from an answer: qrm-host down is not "no plugin resources".
  if (answers.ok() && client_) QueueExtendedResources(now, answers->allocatable);
  StatusOr<cluster::NodeResourceTopology> nrt =
      answers.ok() ? BuildNodeResourceTopology(options_.node_name, answers->allocatable,
                                               answers->allocations)
                   : StatusOr<cluster::NodeResourceTopology>(answers.status());
  MutexLock lock(mu_);
  if (!nrt.ok()) {  // keep the last good one: nothing is built from what could not be read
    if (topology_error_ != nrt.status().message()) {
      log_->warn("node={}: cannot build the NodeResourceTopology (keeping the last): {}",
                 options_.node_name, nrt.status().message());
    }
    topology_error_ = nrt.status().message();
    return;
  }
  topology_error_.clear();
  topology_json_ = cluster::EncodeNodeResourceTopology(*nrt);
  const std::string zones = cluster::EncodeNrtZones(nrt->zones);
  const std::string attributes = cluster::EncodeNrtAttributes(nrt->attributes);
  const std::string mine = zones + attributes;
  const bool due = topology_retry_ || mine != topology_written_ ||
                   now - topology_written_at_ >= options_.topology_refresh_s;
  if (!client_ || !due) return;
  topology_retry_ = false;
  topology_written_ = mine;
  topology_written_at_ = now;
  Pending p{now, "", {{"zones", zones}, {"attributes", attributes}}};
  p.status = topology_json_;  // the whole object, for the create
  topology_to_write_ = std::move(p);
  wake_.notify_one();
}

// Every check: the node may have been rewritten since (the kubelet zeroes extended
// resources when it re-registers), so it is read and compared each time.
void NodeReporter::QueueExtendedResources(int64_t now,
                                          const admin::v1::GetAllocatableResponse& allocatable) {
  std::vector<std::string> skipped;
  cluster::ExtendedResources desired = ExtendedResourcesFrom(allocatable, &skipped);
  SkipNames(skipped);
  MutexLock lock(mu_);
  extended_to_check_ = Pending{now, "", {}, std::move(desired)};
  wake_.notify_one();
}

void NodeReporter::SkipNames(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (!skipped_names_.insert(name).second) continue;
    Status why = cluster::ValidateExtendedResourceName(name);
    if (name.find('/') == std::string::npos) {  // cpu, memory: the kubelet's
      log_->debug("node={}: {} is not published as an extended resource: {}", options_.node_name,
                  name, why.message());
    } else {
      log_->warn("node={}: plugin resource not published: {}", options_.node_name, why.message());
    }
  }
}

void NodeReporter::WriterLoop() {
  for (;;) {
    std::optional<Pending> metric, topology, extended;
    {
      MutexLock lock(mu_);
      mu_.Await(wake_, [this]() QRM_REQUIRES(mu_) {
        return stop_ || metric_to_write_.has_value() || topology_to_write_.has_value() ||
               extended_to_check_.has_value();
      });
      if (stop_) return;
      metric.swap(metric_to_write_);
      topology.swap(topology_to_write_);
      extended.swap(extended_to_check_);
    }
    if (metric) WriteNodeMetric(*metric);
    if (topology) WriteTopology(*topology);
    if (extended) CheckExtendedResources(extended->report_time, *extended->extended);
  }
}

void NodeReporter::WriteNodeMetric(const Pending& p) {
  cluster::ObjectWrite w;
  w.collection = cluster::kNodeMetricsPath;
  w.name = options_.node_name;
  w.create_body = cluster::EncodeNodeMetric(NewNodeMetric(options_.node_name));
  w.members["status"] = p.status;
  w.status_subresource = true;
  auto written = cluster::CreateOrUpdate(*client_, w);
  MutexLock lock(mu_);
  metric_retry_ = !written.ok();
  Count(counters_.node_metric, "NodeMetric", written.status(),
        written.ok() ? written->conflicts : 0, p.report_time);
  if (written.ok() && written->created) {
    log_->info("node={}: created its NodeMetric", options_.node_name);
  }
}

void NodeReporter::WriteTopology(const Pending& p) {
  cluster::ObjectWrite w;
  w.collection = cluster::kNrtPath;
  w.name = options_.node_name;
  w.create_body = p.status;
  w.members = p.members;
  auto written = cluster::CreateOrUpdate(*client_, w);
  MutexLock lock(mu_);
  topology_retry_ = !written.ok();
  Count(counters_.topology, "NodeResourceTopology", written.status(),
        written.ok() ? written->conflicts : 0, p.report_time);
}

void NodeReporter::CheckExtendedResources(int64_t time, const cluster::ExtendedResources& desired) {
  StatusOr<ExtendedResourceCheck> checked = publisher_->Check(desired);
  if (checked.ok() && checked->patched) {
    log_->info("node={}: extended resources patched: added [{}], changed [{}], removed [{}]",
               options_.node_name, fmt::join(checked->added, ", "),
               fmt::join(checked->changed, ", "), fmt::join(checked->removed, ", "));
  }
  MutexLock lock(mu_);
  counters_.published = publisher_->published();
  if (checked.ok() && !checked->patched) {  // in step: nothing written, nothing failing
    counters_.extended_resources.last_error.clear();
    return;
  }
  Count(counters_.extended_resources, "extended resources", checked.status(), 0, time);
}

void NodeReporter::Count(ObjectWrites& w, const char* what, const Status& s, int conflicts,
                         int64_t time) {
  if (s.ok()) {
    ++w.ok;
    w.conflicts += static_cast<uint64_t>(conflicts);
    w.last_written = time;
    w.last_error.clear();
    return;
  }
  ++w.failed;
  if (w.last_error != s.message()) {
    log_->warn("node={}: writing the {} failed (retried at the next check): {}", options_.node_name,
               what, s.message());
  }
  w.last_error = s.message();
}

std::string NodeReporter::Json() const {
  MutexLock lock(mu_);
  return json_;
}

std::string NodeReporter::TopologyJson() const {
  MutexLock lock(mu_);
  return topology_json_;
}

std::string NodeReporter::topology_error() const {
  MutexLock lock(mu_);
  return topology_error_;
}

NodeReporterCounters NodeReporter::counters() const {
  MutexLock lock(mu_);
  return counters_;
}

}  // namespace qrm::advisor
