#include "qrm/admission/admission.h"

#include <cmath>

#include <fmt/format.h>

#include "common/log.h"
#include "common/metrics/metrics.h"
#include "common/parallel_map.h"
#include "qrm/topology/policy_names.h"

namespace qrm::admission {
namespace {

namespace pb = ::resourceplugin::v1alpha1;

PodRef Ref(const ContainerRequest& r) {
  return {r.pod_uid, r.pod_namespace, r.pod_name, r.container_name};
}

pb::TopologyHint ToProtoHint(const topology::TopologyHint& hint, NumaMask default_affinity) {
  pb::TopologyHint out;
  for (int n : hint.affinity.value_or(default_affinity).Nodes()) {
    out.add_nodes(static_cast<uint64_t>(n));
  }
  out.set_preferred(hint.preferred);
  return out;
}

// A plugin's hint lists in the merge's terms; bad node ids, and nodes this
// machine does not have, are the plugin's error and name it.
StatusOr<topology::ResourceHints> FromProtoHints(
    const google::protobuf::Map<std::string, pb::ListOfTopologyHints>& in,
    const std::string& plugin, NumaMask machine) {
  topology::ResourceHints out;
  for (const auto& [resource, list] : in) {
    std::vector<topology::TopologyHint> hints;
    for (const auto& h : list.hints()) {
      if (h.nodes().empty()) {
        return InvalidArgumentError(fmt::format(
            "resource plugin {} returned a hint for {} with no NUMA nodes", plugin, resource));
      }
      std::vector<int64_t> nodes;
      for (uint64_t n : h.nodes()) nodes.push_back(n > 1000 ? 1000 : static_cast<int64_t>(n));
      auto mask = NumaMask::FromNodes(nodes);
      if (!mask.ok()) {
        return mask.status().WithContext(
            fmt::format("resource plugin {} hint for {}", plugin, resource));
      }
      if (!mask->IsSubsetOf(machine)) {
        return InvalidArgumentError(fmt::format(
            "resource plugin {} returned a hint for {} naming NUMA nodes {}; this machine has {}",
            plugin, resource, mask->ToString(), machine.ToString()));
      }
      hints.push_back(topology::TopologyHint::Of(*mask, h.preferred()));
    }
    out[resource] = std::move(hints);
  }
  return out;
}

// Each plugin's answer in the merge's terms. Under the pod scope a plugin
// without pod-level hints (UNIMPLEMENTED) has no preference.
template <typename Response>
std::vector<StatusOr<topology::ResourceHints>> ToHints(
    const std::vector<StatusOr<Response>>& responses, const std::vector<std::string>& plugins,
    NumaMask machine, bool unimplemented_means_no_preference) {
  std::vector<StatusOr<topology::ResourceHints>> out;
  for (size_t i = 0; i < responses.size(); ++i) {
    if (responses[i].ok()) {
      out.push_back(FromProtoHints(responses[i]->resource_hints(), plugins[i], machine));
    } else if (unimplemented_means_no_preference &&
               responses[i].status().code() == StatusCode::kUnimplemented) {
      out.push_back(topology::ResourceHints{});
    } else {
      out.push_back(responses[i].status());
    }
  }
  return out;
}

// Admissions without a resource, by resource and by the level the one resolver gives the pod.
void CountSkipped(const std::vector<std::string>& resources,
                  const StatusOr<qos::QosRequirement>& qos) {
  for (const std::string& r : resources) {
    metrics::Default()
        .GetCounter("qrm_admission_skipped_resources_total",
                    "Containers admitted without a resource whose plugin was down (failure "
                    "policy ignore), by resource and QoS level.",
                    {{"resource", r}, {"qos_level", QosLevelName(qos)}})
        .Inc();
  }
}

// The resource of each target, in order: the merge names each plugin's hints by it.
template <typename Targets>
std::vector<std::string> ResourcesOf(const Targets& targets) {
  std::vector<std::string> names;
  names.reserve(targets.size());
  for (const auto& t : targets) names.push_back(t.resource);
  return names;
}

}  // namespace

struct Admission::Target {
  std::string resource;
  std::shared_ptr<registry::PluginEndpoint> endpoint;
  bool skipped = false;  // left out under the failure policy
};

pb::ResourceRequest ToResourceRequest(const ContainerRequest& r) {
  pb::ResourceRequest req;
  req.set_pod_uid(r.pod_uid);
  req.set_pod_namespace(r.pod_namespace);
  req.set_pod_name(r.pod_name);
  req.set_container_name(r.container_name);
  req.set_container_type(r.container_type);
  req.set_container_index(r.container_index);
  // As the kubewharf kubelet: the role from the label (qrm also reads its annotation), the
  // type from the annotation.
  req.set_pod_role(qos::PodRoleOf(r.labels, r.annotations));
  req.set_pod_type(qos::PodTypeOf(r.annotations));
  for (const auto& [k, v] : r.resources) (*req.mutable_resource_requests())[k] = v;
  for (const auto& [k, v] : r.labels) (*req.mutable_labels())[k] = v;
  for (const auto& [k, v] : r.annotations) (*req.mutable_annotations())[k] = v;
  req.set_native_qos_class(r.native_qos_class);
  req.set_runtime_class(r.runtime_class);
  return req;
}

Admission::Admission(AdmissionOptions options, topology::NumaInfo numa,
                     registry::PluginRegistry& registry, state::StateStore& state,
                     boost::asio::thread_pool& workers, throttle::ThrottleStore* throttles)
    : options_(std::move(options)),
      numa_(std::move(numa)),
      registry_(registry),
      state_(state),
      workers_(workers),
      confinement_(options_.online_cpus, options_.roles),
      throttles_(throttles) {}

std::map<std::string, double> Admission::MapAliases(
    const std::map<std::string, double>& quantities) const {
  std::map<std::string, double> out;
  for (const auto& [name, quantity] : quantities) {
    auto alias = options_.resource_aliases.find(name);
    if (alias == options_.resource_aliases.end()) {
      out[name] += quantity;
    } else {
      out[alias->second.to] += quantity * alias->second.scale;
    }
  }
  return out;
}

std::vector<Admission::Target> Admission::TargetsFor(const ContainerRequest& request) const {
  std::set<std::string> resources(options_.always_consult);
  const auto& accompanying = registry_.options().accompanying_resources;
  for (const auto& [name, quantity] : request.resources) {
    auto alias = options_.resource_aliases.find(name);
    std::string resource = alias == options_.resource_aliases.end() ? name : alias->second.to;
    // An accompanying resource (e.g. NIC bandwidth) is its owner plugin's to place.
    if (auto owner = accompanying.find(resource); owner != accompanying.end()) {
      resource = owner->second;
    }
    resources.insert(resource);
  }
  std::vector<Target> targets;
  for (const auto& resource : resources) {
    // Resources without a plugin (e.g. "cpu" on a node without the CPU plugin)
    // are not qrm's to manage.
    if (auto endpoint = registry_.Find(resource)) targets.push_back({resource, endpoint});
  }
  return targets;
}

StatusOr<qos::QosRequirement> Admission::ResolveQos(const ContainerRequest& request) const {
  return qos::ResolveQos(request.labels, request.annotations, options_.roles);
}

FailurePolicy Admission::PolicyFor(const ContainerRequest& request) const {
  return options_.failure_policies.For(ResolveQos(request));
}

StatusOr<topology::TopologyHint> Admission::ContainerAffinity(const ContainerRequest& request,
                                                              std::vector<Target>& targets) {
  const pb::ResourceRequest base = ToResourceRequest(request);
  auto responses = registry::FanOut<registry::PluginEndpoint::HintsCall>(
      targets.size(),
      [&](size_t i, grpc::CompletionQueue* cq) {
        pb::ResourceRequest req = base;
        req.set_resource_name(targets[i].resource);
        return targets[i].endpoint->StartGetTopologyHints(req, options_.rpc_timeout, cq);
      },
      [&](size_t i, registry::PluginEndpoint::HintsCall& call) {
        return targets[i].endpoint->FinishGetTopologyHints(call);
      });
  const std::vector<std::string> names = ResourcesOf(targets);
  return MergeOrReject(request, targets, ToHints(responses, names, numa_.DefaultAffinity(), false),
                       fmt::format("{}", Ref(request)));
}

StatusOr<topology::TopologyHint> Admission::PodAffinity(const ContainerRequest& request,
                                                        std::vector<Target>& targets) {
  if (auto pod = state_.GetPod(request.pod_uid); pod && pod->pod_affinity) {
    return topology::TopologyHint::Of(*pod->pod_affinity, true);
  }
  pb::PodResourceRequest base;
  base.set_pod_uid(request.pod_uid);
  base.set_pod_namespace(request.pod_namespace);
  base.set_pod_name(request.pod_name);
  base.set_pod_role(qos::PodRoleOf(request.labels, request.annotations));
  base.set_pod_type(qos::PodTypeOf(request.annotations));
  const auto& quantities =
      request.pod_resources.empty() ? request.resources : request.pod_resources;
  for (const auto& [k, v] : quantities) (*base.mutable_resource_requests())[k] = v;
  for (const auto& [k, v] : request.labels) (*base.mutable_labels())[k] = v;
  for (const auto& [k, v] : request.annotations) (*base.mutable_annotations())[k] = v;

  auto responses = registry::FanOut<registry::PluginEndpoint::PodHintsCall>(
      targets.size(),
      [&](size_t i, grpc::CompletionQueue* cq) {
        pb::PodResourceRequest req = base;
        req.set_resource_name(targets[i].resource);
        return targets[i].endpoint->StartGetPodTopologyHints(req, options_.rpc_timeout, cq);
      },
      [&](size_t i, registry::PluginEndpoint::PodHintsCall& call) {
        return targets[i].endpoint->FinishGetPodTopologyHints(call);
      });
  const std::vector<std::string> names = ResourcesOf(targets);
  auto best = MergeOrReject(
      request, targets, ToHints(responses, names, numa_.DefaultAffinity(), true),
      fmt::format("pod {}/{} ({})", request.pod_namespace, request.pod_name, request.pod_uid));
  if (!best.ok()) return best;
  QRM_RETURN_IF_ERROR(state_.SetPodAffinity(request.pod_uid, request.pod_name,
                                            request.pod_namespace,
                                            best->affinity.value_or(numa_.DefaultAffinity())));
  return best;
}

StatusOr<topology::TopologyHint> Admission::MergeOrReject(
    const ContainerRequest& request, std::vector<Target>& targets,
    std::vector<StatusOr<topology::ResourceHints>> hints, const std::string& subject) {
  auto log = Logger("admission");
  const FailurePolicy on_failure = PolicyFor(request);
  topology::ProvidersHints providers;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!hints[i].ok()) {
      if (on_failure == FailurePolicy::kIgnore && IsPluginOutage(hints[i].status())) {
        log->warn("{}: admitting without {}: {}", subject, targets[i].resource,
                  hints[i].status().message());
        targets[i].skipped = true;
        continue;
      }
      return hints[i].status();
    }
    providers.push_back(std::move(*hints[i]));
  }
  QRM_ASSIGN_OR_RETURN(auto merged,
                       topology::Merge(options_.policy, options_.policy_options, numa_, providers));
  if (!merged.admit) {
    return FailedPreconditionError(
        fmt::format("topology affinity error: policy {} cannot admit {} (best hint {})",
                    topology::PolicyName(options_.policy), subject, merged.best.ToString()));
  }
  return merged.best;
}

Status Admission::ValidateRequest(const ContainerRequest& request) {
  if (request.pod_uid.empty() || request.container_name.empty()) {
    return InvalidArgumentError(fmt::format(
        "admission needs a pod uid and a container name (got pod uid \"{}\", container \"{}\")",
        request.pod_uid, request.container_name));
  }
  // A uid the checkpoint cannot name a file after is refused before any plugin allocates.
  QRM_RETURN_IF_ERROR(state::StateStore::ValidatePodUid(request.pod_uid));
  for (const auto& [name, quantity] : request.resources) {
    if (!std::isfinite(quantity) || quantity < 0) {
      return InvalidArgumentError(fmt::format("{}: requested {} = {} must be finite and >= 0",
                                              Ref(request), name, quantity));
    }
  }
  return Status::Ok();
}

StatusOr<topology::TopologyHint> Admission::Affinity(const ContainerRequest& mapped,
                                                     std::vector<Target>& targets) {
  if (options_.policy == topology::Policy::kNone) return topology::TopologyHint::Any(false);
  return options_.scope == topology::Scope::kPod ? PodAffinity(mapped, targets)
                                                 : ContainerAffinity(mapped, targets);
}

std::vector<StatusOr<pb::ResourceAllocationResponse>> Admission::AllocateOnPlugins(
    const pb::ResourceRequest& base, const std::vector<Target>& targets,
    std::vector<Target>& sent) {
  for (const auto& t : targets) {
    if (!t.skipped) sent.push_back(t);
  }
  return registry::FanOut<registry::PluginEndpoint::AllocateCall>(
      sent.size(),
      [&](size_t i, grpc::CompletionQueue* cq) {
        pb::ResourceRequest req = base;
        req.set_resource_name(sent[i].resource);
        return sent[i].endpoint->StartAllocate(req, options_.rpc_timeout, cq);
      },
      [&](size_t i, registry::PluginEndpoint::AllocateCall& call) {
        return sent[i].endpoint->FinishAllocate(call);
      });
}

Status Admission::CollectAllocations(
    const ContainerRequest& request, const std::vector<Target>& sent,
    std::vector<StatusOr<pb::ResourceAllocationResponse>>& responses, AdmissionResult& result) {
  const FailurePolicy on_failure = PolicyFor(request);
  for (size_t i = 0; i < sent.size(); ++i) {
    if (!responses[i].ok()) {
      if (on_failure == FailurePolicy::kIgnore && IsPluginOutage(responses[i].status())) {
        Logger("admission")
            ->warn("{}: admitting without {}: {}", Ref(request), sent[i].resource,
                   responses[i].status().message());
        result.skipped_resources.push_back(sent[i].resource);
        continue;
      }
      return responses[i].status();
    }
    // FinishAllocate validated every entry (registry::ValidateAllocateAnswer): an invalid
    // answer arrives here as an error, never as content.
    for (const auto& [resource, info] : responses[i]->allocation_result().resource_allocation()) {
      result.allocation.resources[resource] = info;
    }
  }
  return Status::Ok();
}

Status Admission::CompleteAndPersist(const ContainerRequest& request, AdmissionResult& result) {
  QRM_ASSIGN_OR_RETURN(result.update, apply::BuildContainerUpdate(result.allocation.resources));
  for (const auto& c : result.update.conflicts)
    Logger("admission")->warn("{}: {}", Ref(request), c);
  if (!result.skipped_resources.empty()) {
    (*result.allocation.request.mutable_annotations())[kSkippedResourcesAnnotation] =
        fmt::format("{}", fmt::join(result.skipped_resources, ","));
    QRM_RETURN_IF_ERROR(confinement_.Apply(request.pod_uid, request.container_name,
                                           result.allocation, state_.Snapshot(), &result.update));
    CountSkipped(result.skipped_resources, ResolveQos(request));
  }
  if (throttles_) throttles_->Overlay(request.pod_uid, request.container_name, &result.update);
  return state_.PutContainer(request.pod_uid, request.pod_name, request.pod_namespace,
                             request.container_name, result.allocation);
}

StatusOr<AdmissionResult> Admission::Admit(const ContainerRequest& request) {
  auto log = Logger("admission");
  QRM_RETURN_IF_ERROR(ValidateRequest(request));
  auto pod_lock = locks_.Lock(request.pod_uid);

  if (auto stored = state_.GetContainer(request.pod_uid, request.container_name)) {
    QRM_ASSIGN_OR_RETURN(auto update, apply::BuildContainerUpdate(stored->resources));
    QRM_RETURN_IF_ERROR(confinement_.Apply(request.pod_uid, request.container_name, *stored,
                                           state_.Snapshot(), &update));
    if (throttles_) throttles_->Overlay(request.pod_uid, request.container_name, &update);
    log->info("{}: already admitted, returning the checkpointed result", Ref(request));
    return AdmissionResult{*stored, std::move(update), true, {}};
  }

  // Aliased quantities are what the plugins see.
  ContainerRequest mapped = request;
  mapped.resources = MapAliases(request.resources);
  mapped.pod_resources = MapAliases(request.pod_resources);
  std::vector<Target> targets = TargetsFor(request);

  metrics::Stopwatch phase;
  auto observe = [&](const char* name, bool ok) {
    metrics::Default()
        .GetHistogram("qrm_admission_duration_seconds",
                      "Admission latency by phase (affinity: hints and merge; allocate: "
                      "Allocate, validation and the durable checkpoint write).",
                      {{"phase", name}, {"result", ok ? "admitted" : "refused"}})
        .Observe(phase.Seconds());
    phase = metrics::Stopwatch();
  };
  StatusOr<topology::TopologyHint> affinity = Affinity(mapped, targets);
  observe("affinity", affinity.ok());
  if (!affinity.ok()) {
    log->error("{}: admission refused: {}", Ref(request), affinity.status().message());
    return affinity.status();
  }

  AdmissionResult result;
  result.allocation.request = ToResourceRequest(mapped);
  *result.allocation.request.mutable_hint() = ToProtoHint(*affinity, numa_.DefaultAffinity());
  std::vector<Target> sent;
  auto responses = AllocateOnPlugins(result.allocation.request, targets, sent);
  Status failure = CollectAllocations(request, sent, responses, result);
  for (const auto& t : targets) {
    if (t.skipped) result.skipped_resources.push_back(t.resource);
  }
  if (failure.ok()) failure = CompleteAndPersist(request, result);
  observe("allocate", failure.ok());
  if (!failure.ok()) {
    log->error("{}: admission failed, rolling back {} plugin(s): {}", Ref(request), sent.size(),
               failure.message());
    Rollback(request, sent);
    return failure;
  }
  log->info("{}: admitted with affinity {} ({} resource(s))", Ref(request), affinity->ToString(),
            result.allocation.resources.size());
  return result;
}

void Admission::Rollback(const ContainerRequest& request, const std::vector<Target>& allocated) {
  auto log = Logger("admission");
  const std::shared_ptr<const state::PodAllocation> pod = state_.GetPod(request.pod_uid);
  ParallelMap<int>(workers_, allocated.size(), [&](size_t i) {
    const Target& t = allocated[i];
    if (Status s = t.endpoint->RemovePod(request.pod_uid, options_.rpc_timeout); !s.ok()) {
      log->error("{}: rollback RemovePod on {} failed: {}", Ref(request), t.resource, s.message());
      return 0;
    }
    if (!pod) return 0;
    // RemovePod released the pod's other containers too: give them back.
    for (const auto& [name, container] : pod->containers) {
      if (name == request.container_name || !container.resources.contains(t.resource)) continue;
      pb::ResourceRequest req = container.request;
      req.set_resource_name(t.resource);
      auto replay = t.endpoint->Allocate(req, options_.rpc_timeout);
      if (!replay.ok()) {
        log->error("pod={} container={}: rollback could not restore {}: {}", request.pod_uid, name,
                   t.resource, replay.status().message());
      }
    }
    return 0;
  });
}

Status Admission::RemovePod(const std::string& pod_uid) {
  auto log = Logger("admission");
  auto pod_lock = locks_.Lock(pod_uid);
  std::vector<std::shared_ptr<registry::PluginEndpoint>> live;
  for (auto& e : registry_.Endpoints()) {
    if (!e->stopped()) live.push_back(e);
  }
  auto results = ParallelMap<Status>(workers_, live.size(), [&](size_t i) {
    return live[i]->RemovePod(pod_uid, options_.rpc_timeout);
  });
  for (size_t i = 0; i < live.size(); ++i) {
    if (!results[i].ok()) {
      log->warn("pod={}: RemovePod on {} failed, keeping the pod for a retry: {}", pod_uid,
                live[i]->resource(), results[i].message());
      return results[i];
    }
  }
  QRM_RETURN_IF_ERROR(state_.RemovePod(pod_uid));
  skipped_.ForgetPod(pod_uid);
  log->info("pod={}: released", pod_uid);
  return Status::Ok();
}

Status Admission::RemoveContainer(const std::string& pod_uid, const std::string& container) {
  auto pod_lock = locks_.Lock(pod_uid);
  return state_.RemoveContainer(pod_uid, container);
}

Status Admission::ReleaseContainer(const std::string& pod_uid, const std::string& container) {
  auto pod_lock = locks_.Lock(pod_uid);
  const std::shared_ptr<const state::ContainerAllocation> stored =
      state_.GetContainer(pod_uid, container);
  if (!stored) return Status::Ok();
  ContainerRequest request;
  request.pod_uid = pod_uid;
  request.pod_name = stored->request.pod_name();
  request.pod_namespace = stored->request.pod_namespace();
  request.container_name = container;
  // The plugins that allocated for it, each once (one plugin may report several resources).
  std::vector<Target> allocated;
  std::set<const registry::PluginEndpoint*> seen;
  for (const auto& [resource, info] : stored->resources) {
    auto endpoint = registry_.Find(resource);
    if (endpoint && seen.insert(endpoint.get()).second) allocated.push_back({resource, endpoint});
  }
  // Forget it first: Rollback replays the pod's other containers from the checkpoint, and a
  // checkpoint that cannot be written must not be left claiming what the plugins released.
  QRM_RETURN_IF_ERROR(state_.RemoveContainer(pod_uid, container));
  Logger("admission")
      ->info("{}: releasing, rolling back {} plugin(s)", Ref(request), allocated.size());
  Rollback(request, allocated);
  return Status::Ok();
}

StatusOr<apply::ContainerUpdate> Admission::CurrentUpdate(const std::string& pod_uid,
                                                          const std::string& container) const {
  auto stored = state_.GetContainer(pod_uid, container);
  if (!stored) {
    return NotFoundError(fmt::format("pod={} container={}: not admitted", pod_uid, container));
  }
  auto update = apply::BuildContainerUpdate(stored->resources);
  if (!update.ok()) return update;
  QRM_RETURN_IF_ERROR(confinement_.Apply(pod_uid, container, *stored, state_.Snapshot(), &*update));
  if (throttles_) throttles_->Overlay(pod_uid, container, &*update);
  return update;
}

}  // namespace qrm::admission
