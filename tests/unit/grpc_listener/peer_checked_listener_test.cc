// SO_PEERCRED admission of connections: allowed peers reach the service, others are closed
// before gRPC sees them, and the socket is created with the configured mode.
#include "common/grpc/peer_checked_listener.h"

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/pluginregistration_v1.grpc.pb.h"
#include "tests/support/temp_dir.h"

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

TEST_CASE("an allowed peer is served; the socket is 0600 in a 0750 directory") {
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
  CHECK((st.st_mode & 0777) == 0750);
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
  PeerCheckedListener listener(socket, allow, SocketPermissions{0660, std::nullopt}, "test");
  REQUIRE(listener.Start(server.get()).ok());
  struct stat st {};
  REQUIRE(::stat(socket.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
  grpc::Status s = Call(socket);
  CHECK_FALSE(s.ok());
  CHECK(listener.refused() >= 1);
  CHECK(listener.accepted() == 0);
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

}  // namespace
}  // namespace qrm
