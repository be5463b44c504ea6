// CriShim: qrm's CRI proxy. The kubelet talks CRI to the shim's socket; the shim forwards to
// the real runtime (containerd), and on the way admits containers through the qrm host and
// writes qrm's decisions into the requests. See docs/cri-shim.md.
//
// Typical wiring (qrm-host's main):
//
//   host::Host host(host_options);
//   auto shim = shim::CriShim::Create(shim_options, host);        // validates options
//   host.Start(shim->applier(), &shim->view());                    // reconcile -> runtime
//   shim->ConnectRuntime();   // waits for the runtime, checks it serves runtime.v1
//   shim->Resync();           // index ids, drop checkpointed containers that are gone
//   shim->Serve();            // only now does the CRI socket open
//   ...
//   shim->Stop();  host.Stop();
//
// Every method not intercepted (interceptors.h) is forwarded as opaque bytes with its
// metadata and deadline, and its status comes back unchanged. The host must be stopped
// before the shim is destroyed (its reconcile loop calls applier() and view()).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <sys/types.h>

#include "common/status.h"
#include "cri-shim/counters.h"
#include "cri-shim/endpoint.h"
#include "cri-shim/resync.h"
#include "cri-shim/shim_options.h"
#include "qrm/host/host.h"
#include "qrm/reconcile/runtime.h"

namespace qrm::shim {

class CriShim {
 public:
  // Checks the options (endpoints, socket group, limits): kInvalidArgument naming the
  // option and value. Nothing is dialed or opened yet. `host` must outlive the shim; it
  // must be started before Resync.
  static StatusOr<std::unique_ptr<CriShim>> Create(ShimOptions options, host::Host& host);
  ~CriShim();
  CriShim(const CriShim&) = delete;
  CriShim& operator=(const CriShim&) = delete;

  // Waits (up to runtime_timeout) for the runtime and image endpoints and checks that the
  // runtime answers runtime.v1 Version. kUnavailable / kFailedPrecondition otherwise.
  Status ConnectRuntime();
  // See resync.h. Requires ConnectRuntime; the applier and view work from then on.
  StatusOr<ResyncStats> Resync();
  // Opens the CRI socket (stale socket removed, permissions as the runtime's socket unless
  // configured) and serves. Requires a successful Resync.
  Status Serve();
  // Stops serving: in-flight calls get shutdown_grace to finish, then are cancelled; the
  // socket is removed. Idempotent.
  void Stop();

  reconcile::RuntimeApplier& applier();
  reconcile::RuntimeView& view();
  const ShimCounters& counters() const;
  // Containers created and neither started nor removed yet, alone or with their sandbox.
  size_t created_not_started() const;
  const ShimOptions& options() const { return options_; }
  // Whether the CRI socket is served and reachable (false once its accept loop died or the
  // socket file was removed or replaced), for /readyz.
  bool listening() const;
  // The CRI socket's filesystem path.
  const std::string& socket_path() const { return cri_.path; }

 private:
  struct Parts;  // everything behind the public surface
  CriShim(ShimOptions options, host::Host& host);

  const ShimOptions options_;
  host::Host& host_;
  Endpoint cri_, runtime_, image_;
  std::optional<gid_t> socket_gid_;
  std::unique_ptr<Parts> parts_;
  bool connected_ = false;
  bool resynced_ = false;
  bool serving_ = false;
};

}  // namespace qrm::shim
