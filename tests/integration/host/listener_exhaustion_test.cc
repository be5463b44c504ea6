// qrm-host's listeners under descriptor exhaustion, on the real binary: its descriptor limit
// is lowered (prlimit) to what it uses plus a little, a client floods the CRI socket and the
// metrics port until accept fails with EMFILE, lets go, and the CRI socket and /metrics must
// answer again. /readyz must turn 503 when a listener's socket is gone. The runtime is the
// cri_shim tests' fake runtime (a gRPC server in this process).
#include <chrono>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/cri_runtime_v1.grpc.pb.h"
#include "testing/child_process.h"
#include "testing/free_port.h"
#include "testing/temp_dir.h"
#include "tests/integration/cri_shim/fake_runtime.h"

namespace qrm::host::testing {
namespace {

using qrm::testing::ChildProcess;
using qrm::testing::ReadFile;
using qrm::testing::TempDir;
using qrm::testing::WaitFor;

int ConnectTcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int ConnectUnix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The HTTP status of GET `target`, or 0 when no answer came within 2 s.
int HttpGet(int port, const std::string& target) {
  const int fd = ConnectTcp(port);
  if (fd < 0) return 0;
  const std::string request = "GET " + target + " HTTP/1.0\r\nHost: x\r\n\r\n";
  [[maybe_unused]] ssize_t sent = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  char buf[64] = {};
  const ssize_t n = ::recv(fd, buf, sizeof(buf) - 1, 0);
  ::close(fd);
  if (n < 12 || std::strncmp(buf, "HTTP/1.", 7) != 0) return 0;
  return std::atoi(buf + 9);
}

bool CriVersionWorks(const std::string& socket) {
  auto stub = ::runtime::v1::RuntimeService::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  ::runtime::v1::VersionResponse response;
  return stub->Version(&ctx, ::runtime::v1::VersionRequest(), &response).ok();
}

int OpenDescriptors(pid_t pid) {
  int n = 0;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    ++n;
  }
  return n;
}

const char* HostBinary() {
  const char* env = std::getenv("QRM_TEST_HOST_BINARY");  // to run against another build
  return env != nullptr ? env : QRM_HOST;
}

struct HostProcess {
  TempDir dir;
  shim::testing::FakeRuntime runtime{dir.File("runtime.sock")};
  int port = qrm::testing::FreeLoopbackPort();
  std::string cri = dir.File("run/cri.sock");
  std::string admin = dir.File("run/admin.sock");
  std::unique_ptr<ChildProcess> process;

  HostProcess() {
    REQUIRE(port != 0);
    process = std::make_unique<ChildProcess>(
        std::vector<std::string>{HostBinary(), "--cri-socket", cri, "--runtime-endpoint",
                                 "unix://" + runtime.socket_path(), "--plugin-dir",
                                 dir.File("lib/plugins"), "--state-dir", dir.File("lib/state"),
                                 "--pod-resources-socket", dir.File("lib/pod-resources.sock"),
                                 "--admin-socket", admin, "--metrics-address",
                                 "127.0.0.1:" + std::to_string(port), "--reconcile-period", "1h"},
        dir.File("host.log"));
    const bool ready = WaitFor([&] { return HttpGet(port, "/readyz") == 200; });
    INFO(ReadFile(dir.File("host.log")));
    REQUIRE(ready);
  }
  std::string log() const { return ReadFile(dir.File("host.log")); }
};

TEST_CASE("the CRI socket and /metrics serve again after descriptor exhaustion", "[listeners]") {
  HostProcess host;
  const pid_t pid = host.process->pid();
  // What it uses now, plus room for a few dozen connections.
  const rlimit limit{static_cast<rlim_t>(OpenDescriptors(pid) + 40),
                     static_cast<rlim_t>(OpenDescriptors(pid) + 40)};
  REQUIRE(::prlimit(pid, RLIMIT_NOFILE, &limit, nullptr) == 0);

  std::vector<int> held;
  for (int i = 0; i < 150; ++i) {
    if (int fd = ConnectUnix(host.cri); fd >= 0) held.push_back(fd);
  }
  for (int i = 0; i < 50; ++i) {
    if (int fd = ConnectTcp(host.port); fd >= 0) held.push_back(fd);
  }
  const bool exhausted =
      WaitFor([&] { return host.log().find("Too many open files") != std::string::npos; });
  INFO(host.log());
  REQUIRE(exhausted);
  for (int fd : held) ::close(fd);

  // Once the clients are gone, both listeners accept again while the process lives on.
  CHECK(WaitFor([&] { return CriVersionWorks(host.cri); }, std::chrono::seconds(15)));
  CHECK(WaitFor([&] { return HttpGet(host.port, "/metrics") == 200; }, std::chrono::seconds(15)));
  CHECK(HttpGet(host.port, "/readyz") == 200);
  CHECK(host.process->running());
}

TEST_CASE("/readyz turns 503 when a listener's socket is gone", "[listeners]") {
  HostProcess host;
  REQUIRE(HttpGet(host.port, "/readyz") == 200);
  const std::string which = GENERATE(std::string("admin"), std::string("cri"));
  REQUIRE(::unlink((which == "admin" ? host.admin : host.cri).c_str()) == 0);
  CHECK(WaitFor([&] { return HttpGet(host.port, "/readyz") == 503; }, std::chrono::seconds(5)));
  CHECK(HttpGet(host.port, "/healthz") == 200);  // alive, so its supervisor can tell the two
}

TEST_CASE("connections past the per-peer bound are closed at once and counted", "[listeners]") {
  HostProcess host;
  std::vector<int> held;
  for (int i = 0; i < 100; ++i) {
    if (int fd = ConnectUnix(host.admin); fd >= 0) held.push_back(fd);
  }
  // The default bound is 64 per uid: the rest were closed by the host (counted in /metrics).
  const std::regex line(
      R"re(qrm_socket_connections_refused_total\{[^}]*socket="admin"[^}]*\} ([0-9.e+]+))re");
  double refused = 0;
  const bool counted = WaitFor([&] {
    const int fd = ConnectTcp(host.port);
    if (fd < 0) return false;
    const std::string req = "GET /metrics HTTP/1.0\r\n\r\n";
    [[maybe_unused]] ssize_t s = ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    std::string page;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) page.append(buf, n);
    ::close(fd);
    std::smatch m;
    if (!std::regex_search(page, m, line)) return false;
    refused = std::stod(m[1]);
    return refused >= 30;
  });
  CHECK(counted);
  CHECK(refused <= 36);  // 100 - 64, never one of the first 64
  for (int fd : held) ::close(fd);
}

}  // namespace
}  // namespace qrm::host::testing
