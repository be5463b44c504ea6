#include "advisor/agent/advisor_service.h"

#include <chrono>
#include <ctime>

#include <grpcpp/grpcpp.h>

#include "advisor/agent/guard_answer.h"
#include "api/advisor_v1.grpc.pb.h"

namespace qrm::advisor {

namespace {

void SetFigures(const std::optional<Aggregate>& a, v1::UsageFigures* out) {
  if (!a) return;
  out->set_samples(a->count);
  out->set_avg(a->avg);
  out->set_p50(a->p50);
  out->set_p90(a->p90);
  out->set_p95(a->p95);
  out->set_p99(a->p99);
  out->set_max(a->max);
}

// The figures of a series: over the window, or its latest sample.
void Figures(const MetricStore& store, const std::string& series, int64_t now, int64_t window,
             std::optional<double> latest, v1::UsageFigures* out) {
  if (latest) out->set_latest(*latest);
  if (window > 0) {
    SetFigures(store.Query(series, now, window), out);
  } else if (latest) {
    SetFigures(Aggregate{1, *latest, *latest, *latest, *latest, *latest, *latest, false}, out);
  }
}

bool PodMatches(const TrackedContainer& c, const std::string& filter) {
  return filter.empty() || filter == c.pod_uid || filter == c.pod_name ||
         filter == c.pod_namespace + "/" + c.pod_name;
}

void AddPodSums(v1::PodUsage& pod) {
  double cpu_latest = 0, cpu_avg = 0, memory_latest = 0, memory_avg = 0;
  uint64_t samples = 0;
  for (const v1::ContainerUsage& c : pod.containers()) {
    cpu_latest += c.cpu().latest();
    cpu_avg += c.cpu().avg();
    memory_latest += c.memory().latest();
    memory_avg += c.memory().avg();
    samples = std::max<uint64_t>(samples, c.memory().samples());
  }
  pod.mutable_cpu()->set_latest(cpu_latest);
  pod.mutable_cpu()->set_avg(cpu_avg);
  pod.mutable_cpu()->set_samples(samples);
  pod.mutable_memory()->set_latest(memory_latest);
  pod.mutable_memory()->set_avg(memory_avg);
  pod.mutable_memory()->set_samples(samples);
}

void AddNode(const AgentState& s, int64_t now, int64_t window, v1::NodeUsage* node) {
  const TickUsage& t = s.last_tick;
  node->set_cpu_capacity(t.cpu_capacity);
  node->set_memory_capacity(t.memory_capacity);
  Figures(s.store, NodeSeries(Resource::kCpu), now, window, t.node_cpu, node->mutable_cpu());
  Figures(s.store, NodeSeries(Resource::kMemory), now, window, t.node_memory,
          node->mutable_memory());
  Figures(s.store, SystemSeries(Resource::kCpu), now, window, s.last_system_cpu,
          node->mutable_system_cpu());
  Figures(s.store, SystemSeries(Resource::kMemory), now, window, s.last_system_memory,
          node->mutable_system_memory());
}

// The latest samples of each container, by its index in the state's list.
std::map<size_t, const ContainerSample*> LatestByIndex(const TickUsage& t) {
  std::map<size_t, const ContainerSample*> out;
  for (const ContainerSample& s : t.containers) out[s.index] = &s;
  return out;
}

void AddPods(const AgentState& s, const v1::GetUsageRequest& request, int64_t now,
             v1::GetUsageResponse& out) {
  const auto latest = LatestByIndex(s.last_tick);
  std::map<std::string, v1::PodUsage*> pods;
  for (size_t i = 0; i < s.containers.size(); ++i) {
    const TrackedContainer& c = s.containers[i];
    if (!PodMatches(c, request.pod())) continue;
    v1::PodUsage*& pod = pods[c.pod_uid];
    if (pod == nullptr) {
      pod = out.add_pods();
      pod->set_uid(c.pod_uid);
      pod->set_name(c.pod_name);
      pod->set_namespace_(c.pod_namespace);
      pod->set_qos_level(c.qos_level);
      pod->set_priority_class(std::string(PriorityClassName(c.priority)));
    }
    v1::ContainerUsage* cu = pod->add_containers();
    cu->set_name(c.name);
    cu->set_container_id(c.container_id);
    cu->set_cgroup(c.cgroup_path);
    const auto it = latest.find(i);
    const ContainerSample* sample = it == latest.end() ? nullptr : it->second;
    Figures(s.store, ContainerSeries(c.Key(), Resource::kCpu), now, request.window_seconds(),
            sample ? sample->cpu : std::nullopt, cu->mutable_cpu());
    Figures(s.store, ContainerSeries(c.Key(), Resource::kMemory), now, request.window_seconds(),
            sample ? std::optional<double>(sample->memory) : std::nullopt, cu->mutable_memory());
  }
  for (auto& [uid, pod] : pods) AddPodSums(*pod);
}

void AddStatus(const AgentState& s, const AgentOptions& o, v1::SamplingStatus* status) {
  status->set_last_sample_unix(s.last_node_sample);
  status->set_interval_ms(o.store.ring.interval_s * 1000);
  status->set_containers_sampled(s.last_tick.containers.size());
  status->set_containers_skipped(s.last_tick.vanished + s.last_tick.unreadable);
  status->set_host_error(s.host_error);
  status->set_runtime_error(s.runtime_error);
}

}  // namespace

v1::GetUsageResponse BuildUsage(const Agent& agent, const v1::GetUsageRequest& request,
                                int64_t now) {
  return agent.Read(
      [&](const AgentState& s, const Predictors&, const PoolReport&, const SamplerCounters&) {
        v1::GetUsageResponse out;
        out.set_time_unix(now);
        out.set_window_seconds(request.window_seconds());
        AddNode(s, now, request.window_seconds(), out.mutable_node());
        AddPods(s, request, now, out);
        AddStatus(s, agent.options(), out.mutable_status());
        return out;
      });
}

namespace {

void AddPrediction(Resource r, const std::string& model, const Prediction& p, int64_t steps,
                   int64_t at, double capacity, v1::ResourcePrediction* out) {
  out->set_resource(std::string(ResourceName(r)));
  out->set_model(model);
  out->set_known(p.known);
  out->set_capacity(capacity);
  out->set_steps_observed(steps);
  out->set_predicted_unix(at);
  if (!p.known) return;
  out->set_peak(p.peak);
  out->set_reclaimable(std::max(capacity - p.peak, 0.0));
  for (const auto& [c, v] : p.classes)
    (*out->mutable_classes())[std::string(PriorityClassName(c))] = v;
  for (const auto& [uid, v] : p.pods) (*out->mutable_pods())[uid] = v;
}

void AddPool(const PoolReport& r, const Predictors& p, const std::string& file,
             v1::PoolDecision* out) {
  out->set_enabled(r.enabled);
  out->set_control_file(file);
  out->set_free_cpus(r.free_cpus);
  out->set_shared(r.shared);
  out->set_reclaimed(r.reclaimed);
  out->set_target(r.target);
  out->set_reason(r.reason);
  out->set_need_cores(r.need_cores);
  out->set_reactive_cores(r.reactive_cores);
  out->set_predicted_cores(r.predicted_cores);
  out->set_pool_model(p.options().pool_model);
  out->set_decided_unix(r.decided);
  out->set_last_error(r.last_error);
}

}  // namespace

v1::GetPredictionResponse BuildPrediction(const Agent& agent, int64_t now,
                                          const std::string& control_file) {
  return agent.Read([&](const AgentState& s, const Predictors& p, const PoolReport& pool,
                        const SamplerCounters&) {
    v1::GetPredictionResponse out;
    out.set_time_unix(now);
    const std::string& model = p.options().node_model;
    AddPrediction(Resource::kCpu, model, s.cpu, p.steps_observed(), s.predicted_at,
                  s.last_tick.cpu_capacity, out.add_resources());
    AddPrediction(Resource::kMemory, model, s.memory, p.steps_observed(), s.predicted_at,
                  s.last_tick.memory_capacity, out.add_resources());
    AddPool(pool, p, control_file, out.mutable_pool());
    return out;
  });
}

class AdvisorServer::Service final : public v1::Advisor::Service {
 public:
  Service(const Agent& agent, std::string control_file, const GuardRunner* guard,
          const NodeReporter* reporter)
      : agent_(agent), control_file_(std::move(control_file)), guard_(guard), reporter_(reporter) {}

  grpc::Status GetUsage(grpc::ServerContext*, const v1::GetUsageRequest* request,
                        v1::GetUsageResponse* response) override {
    if (request->window_seconds() < 0) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          "window_seconds " + std::to_string(request->window_seconds()) + ": must be >= 0");
    }
    *response = BuildUsage(agent_, *request, std::time(nullptr));
    return grpc::Status::OK;
  }

  grpc::Status GetPrediction(grpc::ServerContext*, const v1::GetPredictionRequest*,
                             v1::GetPredictionResponse* response) override {
    *response = BuildPrediction(agent_, std::time(nullptr), control_file_);
    return grpc::Status::OK;
  }

  grpc::Status GetGuard(grpc::ServerContext*, const v1::GetGuardRequest*,
                        v1::GetGuardResponse* response) override {
    *response = BuildGuard(guard_);
    return grpc::Status::OK;
  }

  grpc::Status GetNodeMetric(grpc::ServerContext*, const v1::GetNodeMetricRequest*,
                             v1::GetNodeMetricResponse* response) override {
    if (reporter_ == nullptr) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "this qrm-advisor builds no node report");
    }
    response->set_node_name(reporter_->node_name());
    response->set_json(reporter_->Json());
    response->set_publishing(reporter_->publishing());
    const NodeReporterCounters c = reporter_->counters();
    response->set_writes_ok(c.node_metric.ok);
    response->set_writes_failed(c.node_metric.failed);
    response->set_conflicts(c.node_metric.conflicts + c.topology.conflicts);
    response->set_last_error(c.node_metric.last_error);
    response->set_last_written_unix(c.node_metric.last_written);
    response->set_topology_json(reporter_->TopologyJson());
    response->set_topology_error(reporter_->topology_error());
    response->set_topology_writes_ok(c.topology.ok);
    response->set_topology_writes_failed(c.topology.failed);
    response->set_topology_last_error(c.topology.last_error);
    response->set_extended_resource_patches_ok(c.extended_resources.ok);
    response->set_extended_resource_checks_failed(c.extended_resources.failed);
    response->set_extended_resources_last_error(c.extended_resources.last_error);
    for (const std::string& name : c.published) response->add_extended_resources(name);
    return grpc::Status::OK;
  }

 private:
  const Agent& agent_;
  const std::string control_file_;
  const GuardRunner* guard_;
  const NodeReporter* reporter_;
};

AdvisorServer::AdvisorServer(AdvisorServerOptions options, const Agent& agent,
                             std::string control_file, const GuardRunner* guard,
                             const NodeReporter* reporter)
    : options_(std::move(options)),
      service_(std::make_unique<Service>(agent, std::move(control_file), guard, reporter)) {}

AdvisorServer::~AdvisorServer() {
  Stop();
}

Status AdvisorServer::Start() {
  grpc::ServerBuilder builder;
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) return InternalError("advisor: cannot build the gRPC server");
  listener_ = std::make_unique<PeerCheckedListener>(options_.socket, options_.allow,
                                                    options_.permissions, "advisor");
  if (Status s = listener_->Start(server_.get()); !s.ok()) {
    Stop();
    return s;
  }
  Logger("advisor")->info("serving the advisor service on {}", options_.socket);
  return Status::Ok();
}

void AdvisorServer::Stop() {
  if (listener_) listener_->Stop();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  listener_.reset();
  server_.reset();
}

}  // namespace qrm::advisor
