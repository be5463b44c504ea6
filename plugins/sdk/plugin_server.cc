#include "plugins/sdk/plugin_server.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/errno_text.h"
#include "common/grpc/peer_checked_listener.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/rate_limited_log.h"
#include "common/unix_socket.h"
#include "plugins/sdk/grpc_services.h"

namespace qrm::sdk {

namespace pb = ::resourceplugin::v1alpha1;

namespace {}  // namespace

std::string DefaultSocketName(const std::string& resource_name) {
  std::string name;
  for (char c : resource_name) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    name += keep ? c : '_';
  }
  return name + ".sock";
}

class PluginServer::Impl {
 public:
  Impl(ResourcePlugin& plugin, PluginServerOptions options)
      : plugin_(plugin),
        options_(std::move(options)),
        resource_(plugin.ResourceName()),
        socket_name_(options_.socket_name.empty() ? DefaultSocketName(resource_)
                                                  : options_.socket_name),
        socket_path_(options_.plugin_dir + "/" + socket_name_),
        plugin_service_(plugin),
        watcher_service_(resource_, socket_path_),
        log_(Logger("sdk")) {}

  ~Impl() { Stop(); }

  Status Start() {
    std::error_code ec;
    std::filesystem::create_directories(options_.plugin_dir, ec);
    if (ec) {
      return ErrnoError(ec.value(), "create plugin directory", options_.plugin_dir);
    }
    inotify_fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (inotify_fd_ < 0) return ErrnoError(errno, "inotify_init1 for", options_.plugin_dir);
    if (::inotify_add_watch(inotify_fd_, options_.plugin_dir.c_str(),
                            IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM) < 0) {
      return ErrnoError(errno, "watch", options_.plugin_dir);
    }
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) return ErrnoError(errno, "eventfd for", options_.plugin_dir);
    QRM_RETURN_IF_ERROR(StartServer());
    watcher_ = std::thread([this] { WatchLoop(); });
    return Status::Ok();
  }

  void Stop() {
    if (wake_fd_ >= 0) {
      const uint64_t one = 1;
      (void)!::write(wake_fd_, &one, sizeof(one));
    }
    if (watcher_.joinable()) watcher_.join();
    StopServer();
    if (inotify_fd_ >= 0) ::close(inotify_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    inotify_fd_ = wake_fd_ = -1;
  }

  const std::string& socket_path() const { return socket_path_; }
  int registrations() const { return registrations_.load(); }
  bool serving_now() const { return serving(); }
  bool watcher_registered() const { return watcher_service_.registered(); }

 private:
  // Replaces a stale socket from an earlier run, never any other kind of file.
  Status RemoveStaleSocket() {
    struct stat st {};
    if (::lstat(socket_path_.c_str(), &st) != 0) {
      if (errno == ENOENT) return Status::Ok();
      return ErrnoError(errno, "stat", socket_path_);
    }
    if (!S_ISSOCK(st.st_mode)) {
      return FailedPreconditionError(
          fmt::format("{} exists and is not a socket; refusing to replace it", socket_path_));
    }
    if (::unlink(socket_path_.c_str()) != 0 && errno != ENOENT) {
      return ErrnoError(errno, "remove stale socket", socket_path_);
    }
    log_->info("resource={}: replaced stale socket {}", resource_, socket_path_);
    return Status::Ok();
  }

  // Binds the socket itself and hands gRPC the connections (PeerCheckedListener): gRPC's own
  // listener would stop for good on EMFILE and unlink whatever is at the path on shutdown.
  Status StartServer() {
    QRM_RETURN_IF_ERROR(RemoveStaleSocket());
    QRM_ASSIGN_OR_RETURN(auto fd, ListenUnixSocket(socket_path_));
    struct stat st {};
    if (::chmod(socket_path_.c_str(), 0600) != 0 || ::stat(socket_path_.c_str(), &st) != 0) {
      Status s = ErrnoError(errno, "chmod", socket_path_);
      ::close(fd);
      return s;
    }
    grpc::ServerBuilder builder;
    builder.RegisterService(&plugin_service_);
    builder.RegisterService(&watcher_service_);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (!server) {
      ::close(fd);
      return UnavailableError(fmt::format("cannot serve on {}", socket_path_));
    }
    // The socket's 0600 mode decides who connects; no peer check beyond it.
    PeerAllowlist anyone;
    anyone.anyone = true;
    auto listener =
        std::make_unique<PeerCheckedListener>(socket_path_, anyone, SocketPermissions{}, "sdk");
    if (Status s = listener->Adopt(server.get(), fd); !s.ok()) {
      server->Shutdown();
      return s;
    }
    MutexLock lock(server_mu_);
    server_ = std::move(server);
    listener_ = std::move(listener);
    socket_dev_ = st.st_dev;
    socket_ino_ = st.st_ino;
    log_->info("resource={}: serving on {}", resource_, socket_path_);
    return Status::Ok();
  }

  void StopServer() {
    std::unique_ptr<grpc::Server> server;
    std::unique_ptr<PeerCheckedListener> listener;
    {
      MutexLock lock(server_mu_);
      server = std::move(server_);
      listener = std::move(listener_);
    }
    if (!server) return;
    listener->Stop();  // removes the socket file only if it is still ours
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    server->Wait();
    log_->info("resource={}: stopped serving {}", resource_, socket_path_);
  }

  bool serving() const {
    MutexLock lock(server_mu_);
    return server_ != nullptr;
  }

  // Our socket file is still the one we bound.
  bool OwnSocketInPlace() const {
    struct stat st {};
    return ::lstat(socket_path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
           st.st_dev == socket_dev_ && st.st_ino == socket_ino_;
  }

  // Keeps the socket served: if the path was removed or replaced (a symlink, a FIFO, another
  // file), stop serving (nobody reaches us there) and serve again as soon as the path is
  // free or holds only a stale socket. Returns true when it (re)started serving.
  bool CheckSocket() {
    if (serving()) {
      if (OwnSocketInPlace()) return false;
      log_->warn(
          "resource={}: socket {} was removed or replaced; serving again once the path "
          "is free",
          resource_, socket_path_);
      StopServer();
    }
    struct stat st {};
    const bool path_free = ::lstat(socket_path_.c_str(), &st) != 0 && errno == ENOENT;
    if (!path_free && (!S_ISSOCK(st.st_mode) || SomeoneListens(socket_path_))) {
      // Another live socket is another process's (a second instance): never fight over it.
      blocked_.Log(spdlog::level::err,
                   "resource={}: cannot serve: {} is taken by {} (not ready until it is removed)",
                   resource_, socket_path_,
                   S_ISSOCK(st.st_mode) ? "another live socket" : "a file that is not a socket");
      return false;
    }
    if (Status s = StartServer(); !s.ok()) {
      blocked_.Log(spdlog::level::err, "resource={}: cannot serve again: {}", resource_,
                   s.ToString());
      return false;
    }
    return true;
  }

  static bool SocketExists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
  }

  bool HostSocketExists() const {
    return SocketExists(options_.plugin_dir + "/" + options_.registration_socket);
  }

  // One Register call; waits up to register_timeout for the host to listen.
  Status RegisterWithHost() {
    const std::string target = "unix:" + options_.plugin_dir + "/" + options_.registration_socket;
    auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
    auto stub = pb::Registration::NewStub(channel);
    pb::RegisterRequest req;
    req.set_version(kVersion);
    req.set_endpoint(socket_name_);
    req.set_resource_name(resource_);
    *req.mutable_options() = plugin_.Options();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + options_.register_timeout);
    ctx.set_wait_for_ready(true);
    pb::Empty resp;
    Status status = FromGrpcStatus(stub->Register(&ctx, req, &resp));
    if (status.ok()) {
      ++registrations_;
      log_->info("resource={}: registered with host at {}", resource_, target);
    } else {
      log_->warn("resource={}: registration with host at {} failed: {}", resource_, target,
                 status.ToString());
    }
    return status;
  }

  // Reacts to the plugin directory: re-registers when the host's socket appears (the host
  // (re)started), and keeps our own socket served (CheckSocket) on every event touching it
  // and every 2 s, so a replacement that raised no event we watch is noticed too.
  void WatchLoop() {
    bool want_register = options_.register_with_host && HostSocketExists();
    for (;;) {
      if (want_register) {
        want_register = !RegisterWithHost().ok() && HostSocketExists();
      }
      pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      // While a registration is pending, retry once a second.
      const int n = ::poll(fds, 2, want_register ? 1000 : 2000);
      if (n < 0 && errno != EINTR) {
        log_->error("resource={}: poll on plugin directory failed: {}", resource_,
                    ErrnoText(errno));
        return;
      }
      if (fds[1].revents & POLLIN) return;  // Stop()
      if (fds[0].revents & POLLIN) want_register |= ReadDirectoryEvents();
      if (CheckSocket()) want_register = options_.register_with_host && HostSocketExists();
    }
  }

  // Drains the inotify queue; true when the host's registration socket (re)appeared.
  bool ReadDirectoryEvents() {
    bool host_appeared = false;
    alignas(inotify_event) char buf[4096];
    const ssize_t len = ::read(inotify_fd_, buf, sizeof(buf));
    for (ssize_t off = 0; off < len;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      const std::string name = ev->len > 0 ? ev->name : "";
      if (name == options_.registration_socket && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
        host_appeared = options_.register_with_host;
      }
    }
    return host_appeared;
  }

  ResourcePlugin& plugin_;
  const PluginServerOptions options_;
  const std::string resource_;
  const std::string socket_name_;
  const std::string socket_path_;
  internal::ResourcePluginService plugin_service_;
  internal::WatcherRegistrationService watcher_service_;
  std::shared_ptr<spdlog::logger> log_;

  mutable Mutex server_mu_;
  std::unique_ptr<grpc::Server> server_ QRM_GUARDED_BY(server_mu_);
  std::unique_ptr<PeerCheckedListener> listener_ QRM_GUARDED_BY(server_mu_);
  dev_t socket_dev_ = 0;  // of the socket we bound (watch thread and Start only)
  ino_t socket_ino_ = 0;
  RateLimitedLog blocked_{Logger("sdk"), "lines about the blocked socket path", 1,
                          std::chrono::seconds(60)};
  std::thread watcher_;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<int> registrations_{0};
};

PluginServer::PluginServer(ResourcePlugin& plugin, PluginServerOptions options)
    : impl_(std::make_unique<Impl>(plugin, std::move(options))) {}
PluginServer::~PluginServer() = default;
Status PluginServer::Start() {
  return impl_->Start();
}
void PluginServer::Stop() {
  impl_->Stop();
}
std::string PluginServer::socket_path() const {
  return impl_->socket_path();
}
int PluginServer::registrations() const {
  return impl_->registrations();
}
bool PluginServer::serving() const {
  return impl_->serving_now();
}
bool PluginServer::watcher_registered() const {
  return impl_->watcher_registered();
}

}  // namespace qrm::sdk
