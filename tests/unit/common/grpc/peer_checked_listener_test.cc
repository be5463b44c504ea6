// SO_PEERCRED admission of connections: allowed peers reach the service, others are closed
// before gRPC sees them, and the socket is created with the configured mode.
#include "common/grpc/peer_checked_listener.h"

#include <atomic>
#include <cstring>
#include <mutex>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <spdlog/sinks/base_sink.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/pluginregistration_v1.grpc.pb.h"
#include "common/log.h"
#include "testing/child_process.h"
#include "testing/temp_dir.h"

namespace qrm {
namespace {

class InfoService final : public ::pluginregistration::Registration::Service {
  grpc::Status GetInfo(grpc::ServerContext*, const ::pluginregistration::InfoRequest*,
                       ::pluginregistration::PluginInfo* info) override {
    info->set_name("probe");
    return grpc::Status::OK;
  }
};

grpc::Status Call(const std::string& socket) {
  auto stub = ::pluginregistration::Registration::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  ::pluginregistration::PluginInfo info;
  grpc::Status s = stub->GetInfo(&ctx, {}, &info);
  if (s.ok()) REQUIRE(info.name() == "probe");
  return s;
}

TEST_CASE("an allowed peer is served, and the socket is 0600 in a 0700 directory") {
  testing::TempDir dir;
  InfoService service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  PeerAllowlist allow;
  allow.uids = {::geteuid()};
  const std::string socket = dir.path() + "/run/qrm/admin.sock";
  PeerCheckedListener listener(socket, allow, SocketPermissions{}, "test");
  REQUIRE(listener.Start(server.get()).ok());
  struct stat st {};
  REQUIRE(::stat(socket.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat((dir.path() + "/run/qrm").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  grpc::Status status = Call(socket);
  INFO(status.error_code() << " " << status.error_message());
  CHECK(status.ok());
  CHECK(listener.accepted() >= 1);
  CHECK(listener.refused() == 0);
  listener.Stop();
  server->Shutdown();
  CHECK(::access(socket.c_str(), F_OK) != 0);
}

TEST_CASE("a peer not on the allowlist is refused before gRPC sees it") {
  testing::TempDir dir;
  InfoService service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  PeerAllowlist allow;
  allow.uids = {::geteuid() + 4242};  // not us
  const std::string socket = dir.path() + "/admin.sock";
  std::atomic<int> hook_calls{0};
  PeerCheckedListener listener(socket, allow, SocketPermissions{0660, std::nullopt}, "test",
                               [&hook_calls] { ++hook_calls; });
  REQUIRE(listener.Start(server.get()).ok());
  struct stat st {};
  REQUIRE(::stat(socket.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
  grpc::Status s = Call(socket);
  CHECK_FALSE(s.ok());
  // Stopped first: gRPC may still be reconnecting, and the counts must be read at rest.
  listener.Stop();
  CHECK(listener.refused() >= 1);
  CHECK(listener.accepted() == 0);
  CHECK(hook_calls.load() == listener.refused());  // the owner's metric sees every refusal
  server->Shutdown();
}

// Counts what a logger writes.
class LineCounter : public spdlog::sinks::base_sink<std::mutex> {
 public:
  int lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg&) override { ++lines_; }
  void flush_() override {}

 private:
  int lines_ = 0;
};

int ConnectAndClose(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::close(fd);
  return rc;
}

TEST_CASE("3,000 refused peers produce a bounded number of log lines, and all are counted") {
  testing::TempDir dir;
  InfoService service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  auto counter = std::make_shared<LineCounter>();
  Logger("flood-test")->sinks().push_back(counter);
  PeerAllowlist allow;
  allow.uids = {::geteuid() + 4242};  // not us
  const std::string socket = dir.path() + "/flood.sock";
  PeerCheckedListener listener(socket, allow, SocketPermissions{}, "flood-test");
  REQUIRE(listener.Start(server.get()).ok());
  for (int i = 0; i < 3000; ++i) REQUIRE(ConnectAndClose(socket) == 0);
  REQUIRE(testing::WaitFor([&] { return listener.refused() == 3000; }));
  INFO(counter->lines() << " lines");
  CHECK(counter->lines() >= 1);
  CHECK(counter->lines() <= 25);
  listener.Stop();
  server->Shutdown();
}

TEST_CASE("uid lists parse names and ids and name the flag on errors") {
  auto ids = ParseUidList("0,root,1000", "admin_allowed_uids");
  REQUIRE(ids.ok());
  CHECK(*ids == std::set<uid_t>{0, 1000});
  auto bad = ParseUidList("0,,1", "admin_allowed_uids");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("admin_allowed_uids"));
  auto unknown = ParseUidList("no-such-user-qrm", "admin_allowed_uids");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.status().message(), Catch::Contains("no-such-user-qrm"));
}

TEST_CASE("with a socket group: 0660 socket owned by the group in a 0750 directory") {
  testing::TempDir dir;
  InfoService service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  const gid_t group = ::getegid() + 4242;  // any gid: root may chown to it
  if (::geteuid() != 0) {
    WARN("not root: cannot chown the socket to another group; skipped");
    return;
  }
  const SocketPermissions perms = SocketPermissionsFor(group);
  CHECK(perms.mode == 0660);
  CHECK(perms.dir_mode == 0750);
  // Two levels to create: every one gets the mode and the group, not only the last.
  const std::string socket = dir.path() + "/qrm/sub/registration.sock";
  const mode_t old_umask = ::umask(077);  // as under a strict service manager
  PeerCheckedListener listener(socket, PeerAllowlist{}, perms, "test");
  const Status started = listener.Start(server.get());
  ::umask(old_umask);
  REQUIRE(started.ok());
  struct stat st {};
  REQUIRE(::stat(socket.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
  CHECK(st.st_gid == group);
  for (const std::string level : {"/qrm", "/qrm/sub"}) {
    INFO(level);
    REQUIRE(::stat((dir.path() + level).c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0750);
    CHECK(st.st_gid == group);
  }
  listener.Stop();
  server->Shutdown();
}

TEST_CASE("without a group the permissions are 0600 / 0700") {
  const SocketPermissions perms = SocketPermissionsFor(std::nullopt);
  CHECK(perms.mode == 0600);
  CHECK(perms.dir_mode == 0700);
  CHECK_FALSE(perms.group.has_value());
}

TEST_CASE("gid lists parse names and ids, and empty is no groups") {
  auto ids = ParseGidList("0,root,1000", "socket_allowed_gids");
  REQUIRE(ids.ok());
  CHECK(*ids == std::set<gid_t>{0, 1000});
  auto none = ParseGidList("", "socket_allowed_gids");
  REQUIRE(none.ok());
  CHECK(none->empty());
  auto unknown = ParseGidList("0,no-such-group-qrm", "socket_allowed_gids");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.status().message(), Catch::Contains("socket_allowed_gids"));
  CHECK_THAT(unknown.status().message(), Catch::Contains("no-such-group-qrm"));
}

}  // namespace
}  // namespace qrm
