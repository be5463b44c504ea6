// PodResourcesServer: the kubelet's podresources v1 service (List, GetAllocatableResources,
// Get) on qrm's own Unix socket, for tools such as node-feature-discovery's topology updater.
//
// List and Get answer for every active pod (active_pods.h): a snapshot of the host checkpoint
// (no lock held while answering) joined with the runtime's containers (RuntimeView, one
// ListContainers per call; without a view, or when the runtime does not answer, the
// checkpoint alone). Get of a pod that is not active fails like the kubelet's: gRPC UNKNOWN
// (a plain Go error there) with "pod <name> in namespace <ns> not found".
// GetAllocatableResources asks the plugins (through a callback, normally
// Host::AggregateAllocatable). Every call takes a token from a TokenBucket first and is
// answered RESOURCE_EXHAUSTED when none is left, as the kubelet does.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <grpcpp/server.h>

#include "common/status.h"
#include "common/unix_socket.h"
#include "qrm/podresources/conversion.h"
#include "qrm/reconcile/runtime.h"
#include "qrm/state/state_store.h"

namespace qrm::podresources {

struct PodResourcesOptions {
  std::string socket = "/var/lib/qrm/pod-resources.sock";
  // Read-only service for monitoring agents: no peer check, but the same mode and group
  // rules as qrm's other sockets (0600 / 0700, or 0660 / 0750 with the socket group).
  SocketPermissions permissions;
  double qps = 100;  // <= 0: unlimited
  int burst = 10;
  PodResourcesMapping mapping;
};

using AllocatableSource = std::function<
    std::map<std::string, ::resourceplugin::v1alpha1::AllocatableTopologyAwareResource>()>;

class PodResourcesServer {
 public:
  // `runtime` (may be null) must outlive the server.
  PodResourcesServer(PodResourcesOptions options, const state::StateStore& state,
                     AllocatableSource allocatable, reconcile::RuntimeView* runtime = nullptr);
  ~PodResourcesServer();
  PodResourcesServer(const PodResourcesServer&) = delete;
  PodResourcesServer& operator=(const PodResourcesServer&) = delete;

  // Replaces a stale socket file (never a non-socket), creates the socket mode 0600 in a
  // directory created 0750 if missing, and starts serving.
  Status Start();
  void Stop();  // idempotent

 private:
  class Service;
  PodResourcesOptions options_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace qrm::podresources
