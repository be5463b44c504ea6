#include "qrm/host/host.h"

#include "common/log.h"
#include "common/parallel_map.h"
#include "machine/numa_layout.h"

namespace qrm::host {

StatusOr<topology::NumaInfo> LoadNumaInfo(const std::string& sysfs_root) {
  QRM_ASSIGN_OR_RETURN(const machine::NumaLayout layout, machine::ReadNumaLayout(sysfs_root));
  std::vector<std::vector<uint32_t>> distances;
  for (const std::vector<int>& row : layout.distances) {
    distances.emplace_back(row.begin(), row.end());
  }
  auto info = topology::NumaInfo::Create(layout.nodes, std::move(distances));
  if (!info.ok()) return info.status().WithContext(sysfs_root + "/devices/system/node");
  return info;
}

Host::Host(HostOptions options) : options_(std::move(options)) {}

Host::~Host() {
  Stop();
}

Status Host::Start(reconcile::RuntimeApplier& applier, reconcile::RuntimeView* view) {
  auto log = Logger("host");
  StatusOr<topology::NumaInfo> numa = options_.numa ? StatusOr<topology::NumaInfo>(*options_.numa)
                                                    : LoadNumaInfo(options_.sysfs_root);
  if (!numa.ok()) return numa.status();

  state_ = std::make_unique<state::StateStore>(options_.state_dir);
  QRM_RETURN_IF_ERROR(state_->Load());
  if (state_->recovered_from_corruption()) {
    log->error(
        "host checkpoint: corrupt pod file(s) were moved aside and left out; rebuilding "
        "those pods from the plugins and the runtime: {}",
        state_->recovery_message());
  }
  throttles_ =
      std::make_unique<throttle::ThrottleStore>(options_.state_dir + "/cpu-throttles.json");
  if (Status s = throttles_->Load(); !s.ok()) {
    // Starting without them beats refusing every container; the throttled containers keep
    // their quota until the guard, which still holds them, sets them again.
    log->error("CPU throttles: {}; starting without any", s.message());
  }
  // Containers admitted without their CPU plugin are confined to the online CPUs no
  // exclusive allocation holds (qrm/admission/confinement.h): it needs the online CPUs.
  admission::AdmissionOptions admission_options = options_.admission;
  if (!admission_options.online_cpus) {
    auto limits = registry::LoadMachineLimits(options_.sysfs_root);
    if (limits.ok()) {
      admission_options.online_cpus = limits->online_cpus;
    } else {
      log->warn(
          "online CPUs unknown, containers admitted without their CPU plugin are not "
          "confined: {}",
          limits.status().message());
    }
  }
  workers_ = std::make_unique<boost::asio::thread_pool>(options_.worker_threads);
  registry_ = std::make_unique<registry::PluginRegistry>(options_.registry, io_, *workers_);
  admission_ = std::make_unique<admission::Admission>(admission_options, *numa, *registry_, *state_,
                                                      *workers_, throttles_.get());
  reconciler_ = std::make_unique<reconcile::Reconciler>(
      *registry_, *state_, *admission_, applier, view, *workers_, options_.admission.rpc_timeout);
  // A plugin that (re)registers gets back what it lost before admission reaches it.
  registry_->SetRegistrationHook([reconciler = reconciler_.get()](const auto& plugin) {
    reconciler->OnPluginRegistered(plugin);
  });
  // Fields a crash kept from reaching the runtime after they were checkpointed.
  reconciler_->QueueReapply(state_->Snapshot());
  work_.emplace(io_.get_executor());
  io_thread_ = std::thread([this] { io_.run(); });
  started_ = true;
  QRM_RETURN_IF_ERROR(registry_->Start());
  if (options_.reconcile_period.count() > 0) {
    reconciler_->Start(io_, options_.reconcile_period);
    heap_trimmer_ = std::make_unique<HeapTrimmer>(io_, options_.reconcile_period);
    heap_trimmer_->Start();
  }
  log->info("host started: {} pod(s) in the checkpoint, NUMA nodes {}", state_->Snapshot().size(),
            numa->DefaultAffinity().ToString());
  return Status::Ok();
}

void Host::Stop() {
  if (!started_) return;
  started_ = false;
  // The reconcile timer, the heap trimmer and the registry's directory watch run their handlers
  // on io_thread_, and none of them may be touched from here while one runs: the registry's
  // own socket removal fires a directory event whose handler re-arms the watch, and closing the
  // watch meanwhile crashed about one test teardown in 500. So that thread ends first (a tick in
  // progress finishes), then each part stops with nothing running against it.
  work_.reset();
  io_.stop();
  if (io_thread_.joinable()) io_thread_.join();
  if (reconciler_) reconciler_->Stop();
  if (heap_trimmer_) heap_trimmer_->Stop();
  if (registry_) registry_->Stop();
  if (workers_) workers_->join();
  // Nothing mutates the checkpoint any more: its journal's changes go into the pod files, so a
  // restart reads the files alone.
  if (state_) {
    if (Status s = state_->Compact(); !s.ok()) {
      Logger("host")->warn(
          "host checkpoint: compaction at stop failed (the journal keeps every "
          "change): {}",
          s.message());
    }
  }
}

Allocatable Host::AggregateAllocatable() {
  namespace pb = ::resourceplugin::v1alpha1;
  auto endpoints = registry_->EndpointsWithCapacity();
  auto responses = ParallelMap<StatusOr<pb::GetTopologyAwareAllocatableResourcesResponse>>(
      *workers_, endpoints.size(), [&](size_t i) {
        return endpoints[i]->GetTopologyAwareAllocatableResources(options_.admission.rpc_timeout);
      });
  Allocatable out;
  for (size_t i = 0; i < endpoints.size(); ++i) {
    if (!responses[i].ok()) {
      Logger("host")->warn("resource={}: allocatable unavailable: {}", endpoints[i]->resource(),
                           responses[i].status().message());
      continue;
    }
    for (const auto& [name, resource] : responses[i]->allocatable_resources()) out[name] = resource;
  }
  return out;
}

}  // namespace qrm::host
