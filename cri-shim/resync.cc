#include "cri-shim/resync.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/grpc_status.h"
#include "common/log.h"
#include "common/protocol_keys.h"

namespace qrm::shim {
namespace {

namespace cri = ::runtime::v1;

std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

std::string LabelOr(const google::protobuf::Map<std::string, std::string>& labels,
                    const char* key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

// What the runtime lists, as the index holds it: sandboxes, and the containers of pods
// (oldest first, so the newest container of a name ends up last in the index).
struct Listing {
  std::vector<RuntimeIndex::Sandbox> sandboxes;
  std::vector<RuntimeIndex::Container> containers;
  std::set<std::string> ready_pods;  // uids with a ready sandbox
  std::set<ContainerKey> existing;   // every listed container of a pod
};

Listing IndexListing(const cri::ListPodSandboxResponse& sandboxes,
                     const cri::ListContainersResponse& containers) {
  Listing listing;
  std::map<std::string, std::string> pod_of_sandbox;
  for (const auto& sandbox : sandboxes.items()) {
    RuntimeIndex::Sandbox entry{sandbox.id(), PodInfoFromListedSandbox(sandbox),
                                sandbox.state() == cri::SANDBOX_READY};
    pod_of_sandbox[entry.id] = entry.pod.uid;
    if (entry.ready && !entry.pod.uid.empty()) listing.ready_pods.insert(entry.pod.uid);
    listing.sandboxes.push_back(std::move(entry));
  }
  std::vector<const cri::Container*> ordered;
  for (const auto& c : containers.containers()) ordered.push_back(&c);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto* a, const auto* b) { return a->created_at() < b->created_at(); });
  for (const cri::Container* c : ordered) {
    RuntimeIndex::Container entry;
    entry.id = c->id();
    entry.sandbox_id = c->pod_sandbox_id();
    auto pod = pod_of_sandbox.find(c->pod_sandbox_id());
    entry.key.pod_uid = pod != pod_of_sandbox.end() && !pod->second.empty()
                            ? pod->second
                            : LabelOr(c->labels(), kPodUidLabel);
    entry.key.name = !c->metadata().name().empty() ? c->metadata().name()
                                                   : LabelOr(c->labels(), kContainerNameLabel);
    if (entry.key.pod_uid.empty() || entry.key.name.empty()) continue;  // not a pod's
    listing.existing.insert(entry.key);
    listing.containers.push_back(std::move(entry));
  }
  return listing;
}

// Releases what the checkpoint holds and the runtime no longer runs: pods without a ready
// sandbox, and containers that are gone.
void ReleaseGone(const Listing& listing, host::Host& host, ResyncStats& stats) {
  auto log = Logger("cri-shim");
  for (const auto& [uid, pod] : host.state().Snapshot()) {
    if (!listing.ready_pods.contains(uid)) {
      const PodRef ref{uid, pod->ns, pod->name, ""};
      if (Status r = host.admission().RemovePod(uid); r.ok()) {
        ++stats.pods_released;
        log->info("resync: {}: no ready sandbox in the runtime, released", ref);
      } else {
        ++stats.failures;
        log->error("resync: {}: release failed, reconcile will retry: {}", ref, r.message());
      }
      continue;
    }
    for (const auto& [name, container] : pod->containers) {
      if (listing.existing.contains({uid, name})) {
        ++stats.kept;
        continue;
      }
      const PodRef ref{uid, pod->ns, pod->name, name};
      if (Status r = host.admission().RemoveContainer(uid, name); r.ok()) {
        ++stats.containers_released;
        log->info("resync: {}: gone from the runtime, released", ref);
      } else {
        ++stats.failures;
        log->error("resync: {}: release failed: {}", ref, r.message());
      }
    }
  }
}

}  // namespace

StatusOr<ResyncStats> Resync(const ShimOptions& options, RuntimeChannels& channels,
                             RuntimeIndex& index, host::Host& host) {
  cri::ListPodSandboxResponse sandboxes;
  grpc::Status s = channels.runtime().ListPodSandbox(Context(options.runtime_timeout).get(),
                                                     cri::ListPodSandboxRequest(), &sandboxes);
  if (!s.ok()) return FromGrpcStatus(s).WithContext("resync: ListPodSandbox");
  cri::ListContainersResponse containers;
  s = channels.runtime().ListContainers(Context(options.runtime_timeout).get(),
                                        cri::ListContainersRequest(), &containers);
  if (!s.ok()) return FromGrpcStatus(s).WithContext("resync: ListContainers");

  ResyncStats stats;
  stats.sandboxes = static_cast<size_t>(sandboxes.items_size());
  stats.containers = static_cast<size_t>(containers.containers_size());
  const Listing listing = IndexListing(sandboxes, containers);
  index.Reset(listing.sandboxes, listing.containers);
  ReleaseGone(listing, host, stats);
  Logger("cri-shim")
      ->info(
          "resync: runtime has {} sandbox(es), {} container(s); released {} pod(s) and {} "
          "container(s), kept {} container(s), {} failure(s)",
          stats.sandboxes, stats.containers, stats.pods_released, stats.containers_released,
          stats.kept, stats.failures);
  return stats;
}

}  // namespace qrm::shim
