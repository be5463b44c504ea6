#include "qrm/registry/plugin_registry.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <boost/asio/post.hpp>
#include <dirent.h>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/pluginregistration_v1.grpc.pb.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "common/quote.h"
#include "common/unix_socket.h"
#include "qrm/registry/bounded_registration.h"
#include "qrm/registry/registration_validation.h"
#include "qrm/registry/socket_access.h"

namespace qrm::registry {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

namespace preg = ::pluginregistration;
constexpr const char* kWatcherPluginType = "ResourcePlugin";

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::shared_ptr<grpc::Channel> Dial(const std::string& socket_path, int max_message_bytes) {
  grpc::ChannelArguments args;
  // Each endpoint gets its own connection, never shared with a replaced one.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // A larger answer fails with RESOURCE_EXHAUSTED naming both sizes and the limit.
  args.SetMaxReceiveMessageSize(max_message_bytes);
  return grpc::CreateCustomChannel("unix:" + socket_path, grpc::InsecureChannelCredentials(), args);
}

// The plugin must answer on the endpoint it named: its options, asked for over `channel`
// (waiting up to `timeout` for the socket to accept).
StatusOr<pb::ResourcePluginOptions> DialBack(const std::shared_ptr<grpc::Channel>& channel,
                                             const std::string& path,
                                             std::chrono::milliseconds timeout) {
  auto stub = pb::ResourcePlugin::NewStub(channel);
  pb::ResourcePluginOptions options;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  ctx.set_wait_for_ready(true);
  if (const grpc::Status s = stub->GetResourcePluginOptions(&ctx, pb::Empty(), &options); !s.ok()) {
    return UnavailableError(fmt::format("cannot reach plugin at {}: {}", path, s.error_message()));
  }
  return options;
}

// The options a Register RPC sent win over the dial-back answer, as in the kubewharf kubelet
// (its Register path keeps RegisterRequest.options); a difference is logged, since a plugin
// whose two answers disagree is probably misconfigured.
pb::ResourcePluginOptions ChooseOptions(const pb::RegisterRequest& request,
                                        pb::ResourcePluginOptions dialed) {
  if (!request.has_options()) return dialed;
  if (request.options().SerializeAsString() != dialed.SerializeAsString()) {
    Logger("registry")
        ->warn(
            "resource={} endpoint={}: RegisterRequest options {{{}}} differ from "
            "GetResourcePluginOptions {{{}}}; using the RegisterRequest's",
            request.resource_name(), request.endpoint(), request.options().ShortDebugString(),
            dialed.ShortDebugString());
  }
  return request.options();
}

}  // namespace

std::set<std::string> PluginRegistry::AccompanyingOf(const std::string& resource) const {
  std::set<std::string> out;
  for (const auto& [accompanying, owner] : options_.accompanying_resources) {
    if (owner == resource) out.insert(accompanying);
  }
  return out;
}

class PluginRegistry::RegistrationService final : public BoundedRegistrationService {
 public:
  explicit RegistrationService(PluginRegistry& registry)
      : BoundedRegistrationService(
            [&registry](const pb::RegisterRequest& request) {
              return registry.AcceptRegistration(request, RegistrationStyle::kRegisterRpc);
            },
            registry.options_.max_concurrent_registrations) {}
};

PluginRegistry::PluginRegistry(RegistryOptions options, boost::asio::io_context& io,
                               boost::asio::thread_pool& workers)
    : options_(std::move(options)),
      io_(io),
      workers_(workers),
      refusals_(
          std::make_unique<RateLimitedLog>(Logger("registry"), "refused registration lines")) {}

PluginRegistry::~PluginRegistry() {
  Stop();
}

std::string PluginRegistry::registration_socket_path() const {
  return options_.plugin_dir + "/" + options_.registration_socket;
}

Status PluginRegistry::Start() {
  auto log = Logger("registry");
  if (!options_.machine_sysfs_root.empty()) {
    auto limits = LoadMachineLimits(options_.machine_sysfs_root);
    if (!limits.ok()) return limits.status().WithContext("registry: machine limits");
    limits_ = *limits;
  }
  QRM_RETURN_IF_ERROR(CreateDirectories(options_.plugin_dir, options_.socket_permissions.dir_mode,
                                        options_.socket_permissions.group)
                          .WithContext("create plugin directory"));

  // Other sockets here are the plugins': a socket nobody listens on may be one a plugin has
  // just bound and is about to listen on, so it is never deleted (each plugin replaces its
  // own stale socket; discovery skips sockets that do not answer).
  const std::string reg_path = registration_socket_path();
  if (IsSocket(reg_path)) {
    if (SomeoneListens(reg_path)) {
      return FailedPreconditionError(
          fmt::format("{} is in use by another process (another qrm-host running?)", reg_path));
    }
    // Our own socket, left by a host that was killed: replaced below.
    if (::unlink(reg_path.c_str()) != 0 && errno != ENOENT) {
      return ErrnoError(errno, "remove the stale registration socket", reg_path);
    }
  }

  // Watch before serving so no plugin socket created meanwhile is missed.
  const int ifd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (ifd < 0) return ErrnoError(errno, "inotify_init1 for", options_.plugin_dir);
  if (::inotify_add_watch(ifd, options_.plugin_dir.c_str(),
                          IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM) < 0) {
    const int err = errno;
    ::close(ifd);
    return ErrnoError(err, "watch", options_.plugin_dir);
  }
  watch_ = std::make_unique<boost::asio::posix::stream_descriptor>(io_, ifd);
  ArmWatch();

  service_ = std::make_unique<RegistrationService>(*this);
  grpc::ServerBuilder builder;
  // A RegisterRequest is a few hundred bytes; a larger one is refused by gRPC with
  // RESOURCE_EXHAUSTED before anything reads it.
  builder.SetMaxReceiveMessageSize(std::min(options_.max_message_bytes, kMaxRegisterRequestBytes));
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) return UnavailableError(fmt::format("cannot serve registration on {}", reg_path));
  // The listener owns the socket: it binds, applies the mode and group, and hands gRPC only
  // connections from allowed peers.
  listener_ =
      std::make_unique<PeerCheckedListener>(reg_path, options_.allow, options_.socket_permissions,
                                            "registration", CountPeerRefusals("registration"));
  QRM_RETURN_IF_ERROR(listener_->Start(server_.get()));
  log->info("serving resource plugin registration on {}", reg_path);

  DiscoverExistingSockets();
  return Status::Ok();
}

// Call with the io_context stopped (Host::Stop does): the directory watch's handler runs there
// and re-arms the watch, so closing it while that thread runs is a race.
void PluginRegistry::Stop() {
  if (listener_) listener_->Stop();  // removes the socket
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_->Wait();
    server_.reset();
  }
  listener_.reset();
  if (watch_) {
    boost::system::error_code ec;
    watch_->close(ec);
    watch_.reset();
  }
}

void PluginRegistry::DiscoverExistingSockets() {
  DIR* dir = ::opendir(options_.plugin_dir.c_str());
  if (dir == nullptr) return;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name != options_.registration_socket && IsSocket(options_.plugin_dir + "/" + name)) {
      names.push_back(name);
    }
  }
  ::closedir(dir);
  for (const auto& name : names) {
    boost::asio::post(workers_, [this, name] { Discover(name); });
  }
}

void PluginRegistry::ArmWatch() {
  watch_->async_read_some(boost::asio::buffer(watch_buf_),
                          [this](const boost::system::error_code& ec, size_t bytes) {
                            if (ec) return;  // closed by Stop()
                            OnDirectoryEvents(bytes);
                            ArmWatch();
                          });
}

void PluginRegistry::OnDirectoryEvents(size_t bytes) {
  for (size_t off = 0; off < bytes;) {
    const auto* ev = reinterpret_cast<const inotify_event*>(watch_buf_ + off);
    off += sizeof(inotify_event) + ev->len;
    if (ev->len == 0) continue;
    const std::string name = ev->name;
    if (name == options_.registration_socket) continue;
    if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
      if (IsSocket(options_.plugin_dir + "/" + name)) {
        boost::asio::post(workers_, [this, name] { Discover(name); });
      }
    } else if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
      OnSocketRemoved(name);
    }
  }
}

void PluginRegistry::OnSocketRemoved(const std::string& socket_name) {
  const std::string path = options_.plugin_dir + "/" + socket_name;
  MutexLock lock(mu_);
  for (auto& [resource, endpoint] : endpoints_) {
    if (endpoint->socket_path() == path) endpoint->MarkStopped("socket " + path + " was removed");
  }
}

// Plugin-watcher style: ask the new socket who it is.
void PluginRegistry::Discover(const std::string& socket_name) {
  auto log = Logger("registry");
  const std::string path = options_.plugin_dir + "/" + socket_name;
  {
    // Already registered through the Register RPC on this socket: nothing to do.
    MutexLock lock(mu_);
    for (const auto& [resource, endpoint] : endpoints_) {
      if (endpoint->socket_path() == path && !endpoint->stopped()) return;
    }
  }
  auto stub = preg::Registration::NewStub(Dial(path, options_.max_message_bytes));
  preg::PluginInfo info;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + options_.dial_timeout);
    ctx.set_wait_for_ready(true);
    const grpc::Status s = stub->GetInfo(&ctx, preg::InfoRequest(), &info);
    if (!s.ok()) {
      // Not a watcher-style plugin (it registers by RPC), or not ours at all.
      log->debug("socket {}: no plugin info ({})", path, s.error_message());
      return;
    }
  }
  if (info.type() != kWatcherPluginType) {
    log->debug("socket {}: plugin type \"{}\" is not {}; ignored", path, info.type(),
               kWatcherPluginType);
    return;
  }
  Status status;
  bool version_ok = false;
  for (const auto& v : info.supported_versions()) version_ok |= v == kSupportedVersion;
  if (!version_ok) {
    status = InvalidArgumentError(
        fmt::format("plugin {} on {} supports none of its versions with this host (wants {})",
                    info.name(), path, kSupportedVersion));
  } else if (!info.endpoint().empty() && info.endpoint() != path &&
             info.endpoint() != socket_name) {
    status = InvalidArgumentError(fmt::format(
        "plugin {} on {} names a different endpoint \"{}\"; it must serve on its own socket",
        info.name(), path, info.endpoint()));
  } else {
    pb::RegisterRequest req;
    req.set_version(std::string(kSupportedVersion));
    req.set_endpoint(socket_name);
    req.set_resource_name(info.name());
    status = AcceptRegistration(req, RegistrationStyle::kDirectoryWatcher);
  }
  if (!status.ok()) {
    // The one line an operator gets for it (AcceptRegistration does not log watcher-style
    // refusals).
    log->warn("socket {}: plugin {} refused: {}", path, Quote(info.name()), status.message());
  }
  preg::RegistrationStatus notify;
  notify.set_plugin_registered(status.ok());
  notify.set_error(status.ok() ? "" : status.message());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options_.dial_timeout);
  preg::RegistrationStatusResponse ignored;
  if (const grpc::Status s = stub->NotifyRegistrationStatus(&ctx, notify, &ignored); !s.ok()) {
    log->warn("socket {}: NotifyRegistrationStatus failed: {}", path, s.error_message());
  }
}

StatusOr<std::string> PluginRegistry::CheckRequest(const pb::RegisterRequest& request) const {
  QRM_RETURN_IF_ERROR(ValidateVersion(request.version()));
  QRM_RETURN_IF_ERROR(ValidateResourceName(request.resource_name()));
  if (request.endpoint() == options_.registration_socket) {
    return InvalidArgumentError(
        fmt::format("endpoint \"{}\" is the host's own registration socket", request.endpoint()));
  }
  return ResolveEndpoint(options_.plugin_dir, request.endpoint());
}

Status PluginRegistry::AcceptRegistration(const pb::RegisterRequest& request,
                                          RegistrationStyle style) {
  auto refuse = [&](const Status& s) {
    // Directory-watched plugins are refused with one warning in Discover, naming the socket.
    // Client strings quoted and capped; a flood of refusals is rate-limited.
    if (style == RegistrationStyle::kRegisterRpc) {
      refusals_->Log(spdlog::level::err, "resource={} endpoint={}: registration refused: {}",
                     Quote(request.resource_name()), Quote(request.endpoint()),
                     CapText(s.message(), 512));
    }
    return s;
  };
  StatusOr<std::string> path = CheckRequest(request);
  if (!path.ok()) return refuse(path.status());
  // A plugin may register both ways at once. An explicit Register always wins;
  // discovery never replaces a live endpoint on the same socket.
  auto discovered_twice = [&]() QRM_REQUIRES(mu_) {
    if (style != RegistrationStyle::kDirectoryWatcher) return false;
    auto it = endpoints_.find(request.resource_name());
    return it != endpoints_.end() && it->second->socket_path() == *path && !it->second->stopped();
  };
  std::shared_ptr<PluginEndpoint> current;
  {
    MutexLock lock(mu_);
    if (discovered_twice()) return Status::Ok();
    if (auto it = endpoints_.find(request.resource_name()); it != endpoints_.end()) {
      current = it->second;
    }
  }
  // A plugin restarting replaces its own (stopped or abandoned) endpoint; a second live
  // plugin claiming the same resource is a duplicate, and the running one keeps it.
  if (current && current->socket_path() != *path && !current->stopped() &&
      SomeoneListens(current->socket_path())) {
    return refuse(AlreadyExistsError(fmt::format(
        "resource_name \"{}\" is already registered by the live plugin on {}; endpoint \"{}\" "
        "refused as a duplicate registration",
        request.resource_name(), current->socket_path(), request.endpoint())));
  }

  // Dial back: the plugin must answer on the endpoint it named.
  auto channel = Dial(*path, options_.max_message_bytes);
  StatusOr<pb::ResourcePluginOptions> plugin_options =
      DialBack(channel, *path, options_.dial_timeout);
  if (!plugin_options.ok()) return refuse(plugin_options.status());
  auto endpoint = std::make_shared<PluginEndpoint>(
      request.resource_name(), *path, ChooseOptions(request, *std::move(plugin_options)), style,
      channel, limits_, AccompanyingOf(request.resource_name()));
  if (hook_) hook_(endpoint);  // before admission can reach it
  {
    MutexLock lock(mu_);
    if (discovered_twice()) return Status::Ok();
    // A plugin stopping while it registered (its socket removed after it answered): the
    // removal event may have been handled already, and nothing would ever stop an endpoint
    // published now. Checked under mu_, which the removal handler takes: a socket removed
    // after this check stops the endpoint published here.
    if (!IsSocket(*path)) {
      return refuse(UnavailableError(
          fmt::format("socket {} was removed while the plugin registered", *path)));
    }
    endpoints_[request.resource_name()] = endpoint;
  }
  Logger("registry")
      ->info(
          "resource={} endpoint={}: registered ({}; pre_start_required={} need_reconcile={} "
          "topology_alignment={})",
          request.resource_name(), *path,
          style == RegistrationStyle::kRegisterRpc ? "Register RPC" : "directory watcher",
          endpoint->options().pre_start_required(), endpoint->options().need_reconcile(),
          endpoint->options().with_topology_alignment());
  return Status::Ok();
}

std::shared_ptr<PluginEndpoint> PluginRegistry::Find(const std::string& resource) const {
  MutexLock lock(mu_);
  auto it = endpoints_.find(resource);
  return it == endpoints_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<PluginEndpoint>> PluginRegistry::Endpoints() const {
  MutexLock lock(mu_);
  std::vector<std::shared_ptr<PluginEndpoint>> out;
  for (const auto& [resource, endpoint] : endpoints_) out.push_back(endpoint);
  return out;
}

std::vector<std::shared_ptr<PluginEndpoint>> PluginRegistry::EndpointsWithCapacity() const {
  const auto now = Clock::now();
  std::vector<std::shared_ptr<PluginEndpoint>> out;
  for (auto& endpoint : Endpoints()) {
    if (!endpoint->CapacityExpired(options_.grace_period, now)) out.push_back(endpoint);
  }
  return out;
}

}  // namespace qrm::registry
