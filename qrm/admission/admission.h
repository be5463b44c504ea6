// Admission: decides what a container gets, through the resource plugins.
//
//  1. Re-admission: a container already in the host checkpoint gets its
//     stored result; no plugin is called.
//  2. Hints: every plugin serving a requested resource is asked for NUMA hints
//     in parallel (per-RPC deadline; all sent at once from this thread, see
//     qrm/registry/pending_call.h); under the pod scope, pod-level hints are
//     asked once per pod and the pod's affinity is checkpointed.
//  3. Merge under the topology policy; a rejection ends here, nothing allocated.
//  4. Allocate on those plugins in parallel with the merged affinity.
//  5. The result is validated (oci properties, values, env/annotation merge)
//     and written durably to the host checkpoint.
//  6. Only then is it returned.
//
// All or nothing. If step 4 fails on any plugin (error or deadline), or step 5
// fails (invalid plugin answer, checkpoint write error), every plugin that was
// sent Allocate is rolled back: the protocol's only release call is
// RemovePod(pod), so the host calls RemovePod and then replays Allocate, with
// the checkpointed request and hint, for the pod's other containers that this
// plugin already serves. The checkpoint is only written on success, so the host
// keeps nothing either. Plugins that time out are rolled back too (they may
// have allocated before the deadline). The one exception is the per-QoS failure
// policy: for levels whose policy is "ignore" (shared_cores, and pods without
// any QoS annotation, by default) a plugin that fails is left out of the
// container's result instead. The level is resolved as the plugins resolve it
// (qos/: the katalyst annotation, or the pod role through the role table).
//
// Work on one pod is serialized; different pods proceed in parallel. No lock
// is held across a plugin RPC except the pod's own.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/thread_pool.hpp>

#include "common/pod_locks.h"
#include "common/status.h"
#include "qrm/admission/confinement.h"
#include "qrm/admission/container_request.h"
#include "qrm/admission/qos.h"
#include "qrm/admission/skipped_status.h"
#include "qrm/apply/container_update.h"
#include "qrm/registry/plugin_registry.h"
#include "qrm/state/state_store.h"
#include "qrm/throttle/throttle_store.h"
#include "qrm/topology/merge.h"

namespace qrm::admission {

// Requests for `from` are served by the plugin of `to`, scaled (e.g. a
// reclaimed milli-CPU resource to "cpu" with scale 0.001).
struct ResourceAlias {
  std::string to;
  double scale = 1.0;
};

struct AdmissionOptions {
  topology::Policy policy = topology::Policy::kBestEffort;
  topology::Scope scope = topology::Scope::kContainer;
  topology::PolicyOptions policy_options;
  std::chrono::milliseconds rpc_timeout{10000};
  FailurePolicies failure_policies;
  // The operator's role table (the same JSON the plugins' `roles` take): the failure policy,
  // admin and metrics resolve a pod's QoS exactly as the plugins do.
  qos::RoleTable roles;
  // The machine's online CPUs, for confining containers admitted without their CPU plugin
  // (confinement.h); nullopt: Host::Start reads them from sysfs.
  std::optional<CpuSet> online_cpus;
  std::map<std::string, ResourceAlias> resource_aliases;
  // Resources whose plugin is consulted for every container, requested or not
  // (e.g. a NIC plugin that places every pod next to its NIC).
  std::set<std::string> always_consult;
};

struct AdmissionResult {
  state::ContainerAllocation allocation;       // as checkpointed
  apply::ContainerUpdate update;               // owned fields, envs, annotations to apply
  bool readmitted = false;                     // came from the checkpoint, no plugin called
  std::vector<std::string> skipped_resources;  // left out under the failure policy
};

class Admission {
 public:
  // `throttles` (may be null: none) are the CPU quotas the host holds containers at; they
  // join every container's owned fields (throttle_store.h).
  Admission(AdmissionOptions options, topology::NumaInfo numa, registry::PluginRegistry& registry,
            state::StateStore& state, boost::asio::thread_pool& workers,
            throttle::ThrottleStore* throttles = nullptr);

  StatusOr<AdmissionResult> Admit(const ContainerRequest& request);

  // Releases a whole pod: RemovePod on every live plugin, then the checkpoint
  // entry. If a plugin fails, the entry stays (so a later call retries) and the
  // error is returned.
  Status RemovePod(const std::string& pod_uid);
  // Forgets one container in the host checkpoint (its plugins release it with
  // the pod: the protocol has no per-container release).
  Status RemoveContainer(const std::string& pod_uid, const std::string& container);
  // Undoes a successful Admit whose container never came to exist (the runtime refused
  // CreateContainer): the container leaves the host checkpoint, then every plugin that
  // allocated for it is rolled back as a failed admission is (RemovePod, then Allocate
  // replayed for the pod's other containers on that plugin). OK, and nothing is called,
  // if the container is not admitted. A checkpoint write error is returned before any
  // plugin is touched; plugin failures are logged, as in a failed admission.
  Status ReleaseContainer(const std::string& pod_uid, const std::string& container);

  // The owned fields a checkpointed container should have now: its plugins' allocations,
  // confinement and its CPU throttle.
  StatusOr<apply::ContainerUpdate> CurrentUpdate(const std::string& pod_uid,
                                                 const std::string& container) const;

  const AdmissionOptions& options() const { return options_; }
  const topology::NumaInfo& numa() const { return numa_; }
  // The pod's QoS through the one resolver (qos/), with this host's role table.
  StatusOr<qos::QosRequirement> ResolveQos(const ContainerRequest& request) const;
  FailurePolicy PolicyFor(const ContainerRequest& request) const;
  // Containers admitted without their CPU plugin (confinement.h) and what became of the
  // resources they were admitted without (skipped_status.h); the reconcile loop drives both.
  Confinement& confinement() { return confinement_; }
  SkippedStatus& skipped_status() { return skipped_; }
  const SkippedStatus& skipped_status() const { return skipped_; }
  PodLocks& pod_locks() { return locks_; }
  throttle::ThrottleStore* throttles() const { return throttles_; }

 private:
  struct Target;  // one plugin consulted for one resource
  std::vector<Target> TargetsFor(const ContainerRequest& request) const;
  std::map<std::string, double> MapAliases(const std::map<std::string, double>& quantities) const;
  StatusOr<topology::TopologyHint> PodAffinity(const ContainerRequest& request,
                                               std::vector<Target>& targets);
  StatusOr<topology::TopologyHint> ContainerAffinity(const ContainerRequest& request,
                                                     std::vector<Target>& targets);
  // Applies the failure policy to each plugin's hints, merges, and rejects
  // what the policy does not admit; `subject` names the container or pod.
  StatusOr<topology::TopologyHint> MergeOrReject(
      const ContainerRequest& request, std::vector<Target>& targets,
      std::vector<StatusOr<topology::ResourceHints>> hints, const std::string& subject);
  void Rollback(const ContainerRequest& request, const std::vector<Target>& allocated);

  // The steps of Admit, in order.
  static Status ValidateRequest(const ContainerRequest& request);
  // The merged affinity under the configured policy and scope (`mapped`: aliases applied).
  StatusOr<topology::TopologyHint> Affinity(const ContainerRequest& mapped,
                                            std::vector<Target>& targets);
  // Allocate on every target not skipped (in parallel); fills `sent` with those targets.
  std::vector<StatusOr<::resourceplugin::v1alpha1::ResourceAllocationResponse>> AllocateOnPlugins(
      const ::resourceplugin::v1alpha1::ResourceRequest& base, const std::vector<Target>& targets,
      std::vector<Target>& sent);
  // The answers into `result` under the failure policy; the first failure it cannot excuse.
  Status CollectAllocations(
      const ContainerRequest& request, const std::vector<Target>& sent,
      std::vector<StatusOr<::resourceplugin::v1alpha1::ResourceAllocationResponse>>& responses,
      AdmissionResult& result);
  // Owned fields, skipped-resource annotation and confinement, then the durable checkpoint.
  Status CompleteAndPersist(const ContainerRequest& request, AdmissionResult& result);

  const AdmissionOptions options_;
  const topology::NumaInfo numa_;
  registry::PluginRegistry& registry_;
  state::StateStore& state_;
  boost::asio::thread_pool& workers_;
  PodLocks locks_;
  mutable Confinement confinement_;
  SkippedStatus skipped_;
  throttle::ThrottleStore* const throttles_;
};

// Builds the ResourceRequest sent to plugins (resource_name and hint unset).
::resourceplugin::v1alpha1::ResourceRequest ToResourceRequest(const ContainerRequest& request);

}  // namespace qrm::admission
