#include "qrm/admin/admin_server.h"

#include <grpcpp/grpcpp.h>

#include "api/admin_v1.grpc.pb.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "qrm/admin/throttle_calls.h"
#include "qrm/admission/qos.h"
#include "qrm/apply/container_update.h"
#include "qrm/registry/socket_access.h"
#include "qrm/topology/policy_names.h"

namespace qrm::admin {
namespace adm = ::qrm::admin::v1;

namespace {

int64_t UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

bool Matches(const state::PodAllocation& pod, const std::string& filter) {
  return filter.empty() || pod.uid == filter || pod.name == filter ||
         pod.ns + "/" + pod.name == filter;
}

void FillContainer(const std::string& uid, const std::string& name,
                   const state::ContainerAllocation& c, const admission::Admission& admission,
                   adm::ContainerAllocation* out) {
  out->set_name(name);
  for (const auto& [resource, info] : c.resources) (*out->mutable_resources())[resource] = info;
  // The level as admission and the plugins resolve it (labels, annotations, role table).
  const StatusOr<qos::QosRequirement> qos = qos::ResolveQos(c.request, admission.options().roles);
  out->set_qos_level(admission::QosLevelName(qos));
  out->set_pod_role(c.request.pod_role());
  if (qos.ok()) {
    out->set_numa_binding(qos->numa_binding);
    out->set_numa_exclusive(qos->numa_exclusive);
  }
  out->mutable_requests()->insert(c.request.resource_requests().begin(),
                                  c.request.resource_requests().end());
  for (const std::string& resource : admission::StillSkipped(c)) {
    const std::string refusal = admission.skipped_status().Refusal({uid, name, resource});
    (*out->mutable_skipped_resources())[resource] =
        refusal.empty() ? "pending" : "unallocatable: " + refusal;
  }
  // What the runtime was told, built exactly as admission and reconcile build it (confinement
  // of a container admitted without its CPU plugin included).
  auto update = admission.CurrentUpdate(uid, name);
  if (!update.ok()) return;
  out->set_cpuset_cpus(update->resources.cpuset_cpus());
  out->set_cpuset_mems(update->resources.cpuset_mems());
  out->mutable_envs()->insert(update->envs.begin(), update->envs.end());
  out->mutable_annotations()->insert(update->annotations.begin(), update->annotations.end());
}

}  // namespace

class AdminServer::Service final : public adm::Admin::Service {
 public:
  explicit Service(host::Host& host) : host_(host) {}

  grpc::Status ListPlugins(grpc::ServerContext*, const adm::ListPluginsRequest*,
                           adm::ListPluginsResponse* response) override {
    for (const auto& e : host_.registry().Endpoints()) {
      adm::PluginStatus* p = response->add_plugins();
      p->set_resource_name(e->resource());
      p->set_socket_path(e->socket_path());
      p->set_registration_style(e->style() == registry::RegistrationStyle::kRegisterRpc
                                    ? "device-plugin"
                                    : "plugin-watcher");
      p->set_state(e->stopped() ? "stopped" : "healthy");
      p->set_registered_at_unix(UnixSeconds(e->registered_at()));
      if (auto since = e->stopped_since(); since.has_value()) {
        // stopped_since is a steady-clock time: convert through "how long ago".
        auto ago = std::chrono::steady_clock::now() - *since;
        p->set_stopped_since_unix(
            UnixSeconds(std::chrono::system_clock::now() -
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(ago)));
      }
      p->set_last_error(e->last_error());
      *p->mutable_options() = e->options();
    }
    return grpc::Status::OK;
  }

  grpc::Status ListAllocations(grpc::ServerContext*, const adm::ListAllocationsRequest* request,
                               adm::ListAllocationsResponse* response) override {
    for (const auto& [uid, pod] : host_.state().Snapshot()) {
      if (!pod || !Matches(*pod, request->pod())) continue;
      adm::PodAllocation* p = response->add_pods();
      p->set_uid(pod->uid);
      p->set_name(pod->name);
      p->set_namespace_(pod->ns);
      for (const auto& [name, c] : pod->containers) {
        FillContainer(uid, name, c, host_.admission(), p->add_containers());
      }
    }
    if (!request->pod().empty() && response->pods_size() == 0) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "no pod with uid, name or namespace/name \"" + request->pod() +
                              "\" has allocations in qrm");
    }
    return grpc::Status::OK;
  }

  grpc::Status GetAllocatable(grpc::ServerContext*, const adm::GetAllocatableRequest*,
                              adm::GetAllocatableResponse* response) override {
    for (auto& [resource, a] : host_.AggregateAllocatable()) {
      (*response->mutable_resources())[resource] = std::move(a);
    }
    const admission::AdmissionOptions& options = host_.admission().options();
    response->set_topology_policy(std::string(topology::PolicyName(options.policy)));
    response->set_topology_scope(std::string(topology::ScopeName(options.scope)));
    const topology::NumaInfo& numa = host_.admission().numa();
    for (int id : numa.nodes()) {
      adm::NumaNode* node = response->add_numa_nodes();
      node->set_id(static_cast<uint32_t>(id));
      if (!numa.has_distances()) continue;
      for (int to : numa.nodes()) {
        (*node->mutable_distances())[static_cast<uint32_t>(to)] = numa.Distance(id, to);
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status SetCpuThrottle(grpc::ServerContext*, const adm::SetCpuThrottleRequest* request,
                              adm::CpuThrottle* response) override {
    auto answer = admin::SetCpuThrottle(host_, *request);
    if (answer.ok()) *response = std::move(*answer);
    return ToGrpcStatus(answer.status());
  }

  grpc::Status ClearCpuThrottle(grpc::ServerContext*, const adm::ClearCpuThrottleRequest* request,
                                adm::ClearCpuThrottleResponse* response) override {
    auto answer = admin::ClearCpuThrottle(host_, *request);
    if (answer.ok()) *response = std::move(*answer);
    return ToGrpcStatus(answer.status());
  }

  grpc::Status ListCpuThrottles(grpc::ServerContext*, const adm::ListCpuThrottlesRequest*,
                                adm::ListCpuThrottlesResponse* response) override {
    *response = admin::ListCpuThrottles(host_);
    return grpc::Status::OK;
  }

 private:
  host::Host& host_;
};

AdminServer::AdminServer(AdminOptions options, host::Host& host)
    : options_(std::move(options)), service_(std::make_unique<Service>(host)) {}

AdminServer::~AdminServer() {
  Stop();
}

Status AdminServer::Start() {
  grpc::ServerBuilder builder;
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) return InternalError("admin: cannot build the gRPC server");
  listener_ =
      std::make_unique<PeerCheckedListener>(options_.socket, options_.allow, options_.permissions,
                                            "admin", registry::CountPeerRefusals("admin"));
  if (Status s = listener_->Start(server_.get()); !s.ok()) {
    Stop();
    return s;
  }
  Logger("admin")->info("serving the admin service on {}", options_.socket);
  return Status::Ok();
}

void AdminServer::Stop() {
  if (listener_) listener_->Stop();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  listener_.reset();
  server_.reset();
}

}  // namespace qrm::admin
