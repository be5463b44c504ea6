// The SDK's process lifecycle, on a real plugin process: stale sockets,
// signals, a socket deleted under it.
#include <cstring>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "testing/child_process.h"
#include "testing/temp_dir.h"

namespace qrm::sdk {
namespace {

namespace pb = ::resourceplugin::v1alpha1;
using qrm::testing::ChildProcess;
using qrm::testing::TempDir;
using qrm::testing::WaitFor;

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// True once the plugin answers GetResourcePluginOptions on `socket`.
bool Serves(const std::string& socket) {
  auto stub = pb::ResourcePlugin::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  pb::ResourcePluginOptions options;
  return stub->GetResourcePluginOptions(&ctx, pb::Empty(), &options).ok();
}

std::vector<std::string> PluginArgs(const TempDir& dir) {
  return {QRM_TEST_PLUGIN, "--resource", "test.qrm.io/life", "--plugin-dir", dir.path()};
}

void BindDeadSocket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  ::close(fd);
}

TEST_CASE("a plugin replaces a stale socket and removes its socket on SIGTERM", "[sdk]") {
  TempDir dir;
  const std::string socket = dir.File("test.qrm.io_life.sock");
  BindDeadSocket(socket);
  ChildProcess plugin(PluginArgs(dir), dir.File("plugin.log"));
  REQUIRE(WaitFor([&] { return Serves(socket); }));
  const int status = plugin.Kill(SIGTERM);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(IsSocket(socket));
}

TEST_CASE("SIGINT stops a plugin cleanly too", "[sdk]") {
  TempDir dir;
  const std::string socket = dir.File("test.qrm.io_life.sock");
  ChildProcess plugin(PluginArgs(dir), dir.File("plugin.log"));
  REQUIRE(WaitFor([&] { return Serves(socket); }));
  const int status = plugin.Kill(SIGINT);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(IsSocket(socket));
}

TEST_CASE("a plugin refuses to replace a file that is not a socket", "[sdk]") {
  TempDir dir;
  const std::string path = dir.File("test.qrm.io_life.sock");
  qrm::testing::WriteFile(path, "not a socket");
  ChildProcess plugin(PluginArgs(dir), dir.File("plugin.log"));
  REQUIRE(WaitFor([&] { return !plugin.running(); }));
  CHECK(qrm::testing::ReadFile(path) == "not a socket");
  CHECK_THAT(qrm::testing::ReadFile(dir.File("plugin.log")), Catch::Contains("is not a socket"));
}

TEST_CASE("a plugin whose socket is deleted serves again", "[sdk]") {
  TempDir dir;
  const std::string socket = dir.File("test.qrm.io_life.sock");
  ChildProcess plugin(PluginArgs(dir), dir.File("plugin.log"));
  REQUIRE(WaitFor([&] { return Serves(socket); }));
  REQUIRE(::unlink(socket.c_str()) == 0);
  REQUIRE(WaitFor([&] { return IsSocket(socket) && Serves(socket); }));
  CHECK(plugin.running());
}

// The path taken by something else (deleted, then a FIFO or a symlink put there at once): the
// plugin must stay alive, leave the file alone, report not ready, and serve again once the
// path is free. It used to give up its watch thread and never serve again.
TEST_CASE("a plugin whose socket is replaced by a FIFO or a symlink serves again once freed",
          "[sdk]") {
  TempDir dir;
  const std::string socket = dir.File("test.qrm.io_life.sock");
  auto args = PluginArgs(dir);
  ChildProcess plugin(args, dir.File("plugin.log"));
  REQUIRE(WaitFor([&] { return Serves(socket); }));
  const std::string kind = GENERATE(std::string("fifo"), std::string("symlink"));
  REQUIRE(::unlink(socket.c_str()) == 0);
  if (kind == "fifo") {
    REQUIRE(::mkfifo(socket.c_str(), 0600) == 0);
  } else {
    REQUIRE(::symlink(dir.File("nowhere").c_str(), socket.c_str()) == 0);
  }
  const bool noticed = WaitFor([&] {
    return qrm::testing::ReadFile(dir.File("plugin.log")).find("cannot serve") != std::string::npos;
  });
  INFO(qrm::testing::ReadFile(dir.File("plugin.log")));
  CHECK(noticed);
  CHECK(plugin.running());
  struct stat st {};
  REQUIRE(::lstat(socket.c_str(), &st) == 0);
  CHECK((kind == "fifo" ? S_ISFIFO(st.st_mode) : S_ISLNK(st.st_mode)));  // never deleted

  REQUIRE(::unlink(socket.c_str()) == 0);
  CHECK(WaitFor([&] { return IsSocket(socket) && Serves(socket); }));
  CHECK(plugin.running());
}

}  // namespace
}  // namespace qrm::sdk
