// PeerCheckedListener's limits: the per-peer connection bound and noticing its socket file
// going away (alive()), which /readyz reports.
#include <cstring>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/pluginregistration_v1.grpc.pb.h"
#include "common/grpc/peer_checked_listener.h"
#include "common/grpc/peer_connections.h"
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
  return stub->GetInfo(&ctx, {}, &info);
}

TEST_CASE("PeerConnections forgets connections whose descriptor was closed or reused") {
  PeerConnections peers(2);
  int a[2], b[2], c[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0);
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0);
  CHECK(peers.TryAdd(7, a[0]));
  CHECK(peers.TryAdd(7, b[0]));
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, c) == 0);
  CHECK_FALSE(peers.TryAdd(7, c[0]));  // two held
  CHECK(peers.TryAdd(8, c[0]));        // another uid has its own bound
  // a[0] closed and its number reused by a new socket: not the old connection.
  ::close(a[0]);
  int d[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, d) == 0);
  CHECK(peers.Count(7) == 1);
  CHECK(peers.TryAdd(7, d[0]));
  CHECK(peers.Count(7) == 2);
  for (int fd : {a[1], b[0], b[1], c[0], c[1], d[0], d[1]}) ::close(fd);
  peers.PruneAll();
  CHECK(peers.Count(7) == 0);
}

TEST_CASE("a peer over its connection bound is closed at once; the bound frees as it closes") {
  testing::TempDir dir;
  InfoService service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  PeerAllowlist allow;
  allow.uids = {::geteuid()};
  allow.max_connections_per_peer = 3;
  const std::string socket = dir.path() + "/bounded.sock";
  PeerCheckedListener listener(socket, allow, SocketPermissions{}, "bounded-test");
  REQUIRE(listener.Start(server.get()).ok());
  std::vector<int> held;
  for (int i = 0; i < 5; ++i) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket.c_str(), sizeof(addr.sun_path) - 1);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    held.push_back(fd);
  }
  REQUIRE(testing::WaitFor([&] { return listener.accepted() == 3; }));
  // The two over the bound were closed by the listener: reading them gives EOF.
  char c = 0;
  CHECK(::recv(held[3], &c, 1, 0) == 0);
  CHECK(::recv(held[4], &c, 1, 0) == 0);
  CHECK_FALSE(Call(socket).ok());  // a fourth is refused while three are held
  for (int fd : held) ::close(fd);
  // gRPC closes its ends of the released ones; a new client is served again.
  CHECK(testing::WaitFor([&] { return Call(socket).ok(); }));
  listener.Stop();
  server->Shutdown();
}

TEST_CASE("a listener whose socket file is removed is no longer alive") {
  testing::TempDir dir;
  InfoService service;
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  PeerAllowlist allow;
  allow.uids = {::geteuid()};
  const std::string socket = dir.path() + "/gone.sock";
  PeerCheckedListener listener(socket, allow, SocketPermissions{}, "gone-test");
  REQUIRE(listener.Start(server.get()).ok());
  CHECK(listener.alive());
  REQUIRE(::unlink(socket.c_str()) == 0);
  CHECK(testing::WaitFor([&] { return !listener.alive(); }, std::chrono::seconds(3)));
  listener.Stop();
  server->Shutdown();
}

}  // namespace
}  // namespace qrm
