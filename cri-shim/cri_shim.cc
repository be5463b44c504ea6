#include "cri-shim/cri_shim.h"

#include <filesystem>

#include <boost/asio/thread_pool.hpp>
#include <fmt/format.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grpc/peer_checked_listener.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "common/unix_socket.h"
#include "cri-shim/interceptors.h"
#include "cri-shim/method_table.h"
#include "cri-shim/proxy_service.h"
#include "cri-shim/runtime_access.h"
#include "cri-shim/runtime_channels.h"
#include "cri-shim/runtime_index.h"
#include "cri-shim/socket_file.h"

namespace qrm::shim {

struct CriShim::Parts {
  Parts(const ShimOptions& options, host::Host& host, const Endpoint& runtime,
        const Endpoint& image)
      : counters(methods.Names()),
        channels(runtime, image, options.max_message_bytes),
        applier(options, index, counters),
        view(options),
        interceptors(options, host, index, counters),
        pool(options.admission_threads),
        deps{methods, channels, counters, interceptors, pool},
        unary_service(deps),
        generic_service(deps) {}

  MethodTable methods;
  ShimCounters counters;
  RuntimeIndex index;
  RuntimeChannels channels;
  ShimApplier applier;
  ShimView view;
  Interceptors interceptors;
  boost::asio::thread_pool pool;
  ProxyDeps deps;
  UnaryService unary_service;
  ProxyService generic_service;
  std::unique_ptr<grpc::Server> server;
  // Owns the CRI socket's accept loop: gRPC's own listener stops for good on EMFILE.
  std::unique_ptr<PeerCheckedListener> listener;
  ino_t socket_inode = 0;  // of the socket we created, so Stop removes only ours
};

StatusOr<std::unique_ptr<CriShim>> CriShim::Create(ShimOptions options, host::Host& host) {
  QRM_ASSIGN_OR_RETURN(auto cri, ParseEndpoint("cri_socket", options.cri_socket));
  auto runtime = ParseEndpoint("runtime_endpoint", options.runtime_endpoint);
  if (!runtime.ok()) return runtime.status();
  QRM_ASSIGN_OR_RETURN(auto image, options.image_endpoint.empty()
                                       ? runtime
                                       : ParseEndpoint("image_endpoint", options.image_endpoint));
  if (cri.path == runtime->path || cri.path == image.path) {
    return InvalidArgumentError(fmt::format(
        "cri_socket \"{}\" is the runtime's own socket: the shim would forward to itself",
        options.cri_socket));
  }
  if (options.max_message_bytes <= 0) {
    return InvalidArgumentError(
        fmt::format("max_message_bytes {}: must be positive", options.max_message_bytes));
  }
  if (options.socket_mode && (*options.socket_mode & ~07777) != 0) {
    return InvalidArgumentError(fmt::format("socket_mode {:o}: not a permission mode",
                                            static_cast<unsigned>(*options.socket_mode)));
  }
  if (options.admission_threads == 0) {
    return InvalidArgumentError("admission_threads 0: at least one thread is needed");
  }
  std::optional<gid_t> gid;
  if (options.socket_group) {
    QRM_ASSIGN_OR_RETURN(auto resolved, ResolveGroup("socket_group", *options.socket_group));
    gid = resolved;
  }
  std::unique_ptr<CriShim> shim(new CriShim(std::move(options), host));
  shim->cri_ = cri;
  shim->runtime_ = *runtime;
  shim->image_ = image;
  shim->socket_gid_ = gid;
  shim->parts_ = std::make_unique<Parts>(shim->options_, host, shim->runtime_, shim->image_);
  return shim;
}

CriShim::CriShim(ShimOptions options, host::Host& host)
    : options_(std::move(options)), host_(host) {}

CriShim::~CriShim() {
  Stop();
  parts_->applier.SetRuntime(nullptr);
  parts_->view.SetRuntime(nullptr);
}

Status CriShim::ConnectRuntime() {
  auto log = Logger("cri-shim");
  QRM_RETURN_IF_ERROR(parts_->channels.WaitConnected(options_.runtime_timeout));
  ::runtime::v1::VersionRequest request;
  request.set_version("v1");
  ::runtime::v1::VersionResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options_.runtime_timeout);
  const grpc::Status s = parts_->channels.runtime().Version(&context, request, &response);
  if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    return FailedPreconditionError(fmt::format(
        "the runtime at {} does not serve CRI runtime.v1: {}", runtime_.target, s.error_message()));
  }
  if (!s.ok()) {
    return FromGrpcStatus(s).WithContext(fmt::format("Version from {}", runtime_.target));
  }
  log->info("connected to {} {} (CRI {}) at {}", response.runtime_name(),
            response.runtime_version(), response.runtime_api_version(), runtime_.target);
  connected_ = true;
  return Status::Ok();
}

StatusOr<ResyncStats> CriShim::Resync() {
  if (!connected_) return FailedPreconditionError("Resync before ConnectRuntime");
  auto stats = shim::Resync(options_, parts_->channels, parts_->index, host_);
  if (!stats.ok()) return stats.status();
  parts_->applier.SetRuntime(&parts_->channels);
  parts_->view.SetRuntime(&parts_->channels);
  resynced_ = true;
  return stats;
}

Status CriShim::Serve() {
  if (!resynced_) return FailedPreconditionError("Serve before a successful Resync");
  if (serving_) return Status::Ok();
  QRM_RETURN_IF_ERROR(PrepareSocketPath(cri_.path));
  // Bound under a temporary name and renamed once its permissions are right, so the
  // kubelet never sees the socket with the process's default permissions.
  const std::string temporary =
      (std::filesystem::path(cri_.path).parent_path() /
       fmt::format(".{}.{}", std::filesystem::path(cri_.path).filename().string(), ::getpid()))
          .string();
  ::unlink(temporary.c_str());
  QRM_ASSIGN_OR_RETURN(auto fd, ListenUnixSocket(temporary));
  grpc::ServerBuilder builder;  // no listening port: the listener hands it connections
  builder.RegisterService(&parts_->unary_service);
  builder.RegisterCallbackGenericService(&parts_->generic_service);
  builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
  builder.SetMaxSendMessageSize(options_.max_message_bytes);
  parts_->server = builder.BuildAndStart();
  if (!parts_->server) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return UnavailableError(fmt::format("cannot serve on {}", cri_.path));
  }
  Status s = MatchSocketPermissions(temporary, runtime_.path, options_.socket_mode, socket_gid_);
  if (s.ok() && ::rename(temporary.c_str(), cri_.path.c_str()) != 0) {
    s = ErrnoError(errno, "rename", temporary + " -> " + cri_.path);
  }
  struct stat st {};
  if (s.ok() && ::stat(cri_.path.c_str(), &st) != 0) s = ErrnoError(errno, "stat", cri_.path);
  if (s.ok()) {
    // Anyone the socket's mode lets in (the kubelet's socket has no peer check).
    PeerAllowlist anyone;
    anyone.anyone = true;
    anyone.max_connections_per_peer = options_.max_connections_per_peer;
    parts_->listener =
        std::make_unique<PeerCheckedListener>(cri_.path, anyone, SocketPermissions{}, "cri");
    s = parts_->listener->Adopt(parts_->server.get(), fd);
  } else {
    ::close(fd);
  }
  if (!s.ok()) {
    parts_->listener.reset();
    parts_->server->Shutdown();
    parts_->server.reset();
    ::unlink(temporary.c_str());
    return s;
  }
  parts_->socket_inode = st.st_ino;
  serving_ = true;
  Logger("cri-shim")
      ->info("serving CRI on {} (mode {:o}), forwarding to {} (images: {})", cri_.path,
             st.st_mode & 07777, runtime_.target, image_.target);
  return Status::Ok();
}

void CriShim::Stop() {
  if (!parts_) return;
  if (parts_->listener) parts_->listener->Stop();
  if (parts_->server) {
    parts_->server->Shutdown(std::chrono::system_clock::now() + options_.shutdown_grace);
    parts_->server->Wait();
    parts_->server.reset();
  }
  parts_->pool.join();
  if (serving_) {
    // Only our own socket: another qrm-host may have taken the path over meanwhile.
    struct stat st {};
    if (::stat(cri_.path.c_str(), &st) == 0 && st.st_ino == parts_->socket_inode) {
      ::unlink(cri_.path.c_str());
    }
    serving_ = false;
    Logger("cri-shim")->info("stopped serving CRI on {}", cri_.path);
  }
}

bool CriShim::listening() const {
  return serving_ && parts_->listener && parts_->listener->alive();
}

reconcile::RuntimeApplier& CriShim::applier() {
  return parts_->applier;
}

reconcile::RuntimeView& CriShim::view() {
  return parts_->view;
}

const ShimCounters& CriShim::counters() const {
  return parts_->counters;
}

size_t CriShim::created_not_started() const {
  return parts_->interceptors.created_not_started();
}

}  // namespace qrm::shim
