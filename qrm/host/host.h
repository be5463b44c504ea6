// Host: the qrm host core wired together: plugin registry, host checkpoint,
// admission, reconcile loop and capacity, on one io_context thread (watches,
// timers) and a bounded worker pool (plugin RPCs, durable writes).
//
// The CRI shim and qrm-host's main build on this; tests use it directly with
// recording RuntimeApplier/RuntimeView implementations.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "qrm/admission/admission.h"
#include "qrm/host/heap_trimmer.h"
#include "qrm/reconcile/reconciler.h"
#include "qrm/registry/plugin_registry.h"
#include "qrm/state/state_store.h"
#include "qrm/throttle/throttle_store.h"

namespace qrm::host {

struct HostOptions {
  registry::RegistryOptions registry;
  admission::AdmissionOptions admission;
  // The host checkpoint: one file per pod in <state_dir>/pods (see qrm/state/README.md);
  // created with mode 0700 if missing.
  std::string state_dir = "/var/lib/qrm/state";
  std::chrono::milliseconds reconcile_period{3000};
  size_t worker_threads = 8;
  std::string sysfs_root = "/sys";
  // Overrides the NUMA layout read from sysfs (tests, fake machines).
  std::optional<topology::NumaInfo> numa;
};

// Allocatable and capacity per resource, aggregated over plugins.
using Allocatable =
    std::map<std::string, ::resourceplugin::v1alpha1::AllocatableTopologyAwareResource>;

class Host {
 public:
  explicit Host(HostOptions options);
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // Loads the checkpoint, starts serving registration and the reconcile timer.
  // `applier` and `view` must outlive the host; `view` may be null.
  Status Start(reconcile::RuntimeApplier& applier, reconcile::RuntimeView* view);
  void Stop();

  admission::Admission& admission() { return *admission_; }
  registry::PluginRegistry& registry() { return *registry_; }
  state::StateStore& state() { return *state_; }
  reconcile::Reconciler& reconciler() { return *reconciler_; }
  // The CPU throttles the host holds containers at (<state_dir>/cpu-throttles.json).
  throttle::ThrottleStore& throttles() { return *throttles_; }

  // GetTopologyAwareAllocatableResources from every plugin whose capacity
  // counts, in parallel; a failing plugin is left out (and logged), never
  // blanking the others.
  Allocatable AggregateAllocatable();

 private:
  HostOptions options_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread io_thread_;
  std::unique_ptr<boost::asio::thread_pool> workers_;
  std::unique_ptr<state::StateStore> state_;
  std::unique_ptr<throttle::ThrottleStore> throttles_;
  std::unique_ptr<registry::PluginRegistry> registry_;
  std::unique_ptr<admission::Admission> admission_;
  std::unique_ptr<reconcile::Reconciler> reconciler_;
  std::unique_ptr<HeapTrimmer> heap_trimmer_;
  bool started_ = false;
};

// The machine's NUMA nodes and distances for the topology manager, from
// machine::ReadNumaLayout (`sysfs_root` is "/sys" on a real machine; tests point it at a
// fake tree; no node directory means one node 0).
StatusOr<topology::NumaInfo> LoadNumaInfo(const std::string& sysfs_root);

}  // namespace qrm::host
