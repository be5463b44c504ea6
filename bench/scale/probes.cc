#include "bench/scale/probes.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace qrm::bench {
namespace {

// Closes the descriptor on every return path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

}  // namespace

HttpResponse HttpGet(int port, const std::string& path, std::chrono::milliseconds timeout) {
  Fd sock{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (sock.fd < 0) return {};
  const sockaddr_in addr = Loopback(port);
  if (::connect(sock.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return {};
  const std::string request = "GET " + path +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                              "Accept: */*\r\n\r\n";
  if (::send(sock.fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return {};
  }
  // Read until the server closes the connection (Connection: close) or the time is up.
  std::string raw;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[16384];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return {};
    pollfd p{sock.fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
    const ssize_t n = ::recv(sock.fd, buffer, sizeof buffer, 0);
    if (n < 0) return {};
    if (n == 0) break;
    raw.append(buffer, static_cast<size_t>(n));
  }
  // "HTTP/1.1 200 OK\r\n...\r\n\r\nbody"
  HttpResponse response;
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12) return {};
  response.status = std::atoi(raw.c_str() + 9);
  if (const size_t end = raw.find("\r\n\r\n"); end != std::string::npos) {
    response.body = raw.substr(end + 4);
  }
  return response;
}

bool UnixSocketAccepts(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  Fd sock{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  return sock.fd >= 0 &&
         ::connect(sock.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

int FreeLoopbackPort() {
  Fd sock{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (sock.fd < 0) return -1;
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof addr;
  if (::bind(sock.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(sock.fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return -1;
  }
  return ntohs(addr.sin_port);
}

std::optional<long> ProcNumber(pid_t pid, const std::string& field, const std::string& file) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + file);
  std::string line;
  const std::string prefix = field + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return std::atol(line.c_str() + prefix.size());
  }
  return std::nullopt;
}

std::optional<double> MetricValue(const std::string& metrics_text, const std::string& name) {
  std::istringstream in(metrics_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 &&
        line[name.size()] == ' ') {
      return std::atof(line.c_str() + name.size() + 1);
    }
  }
  return std::nullopt;
}

}  // namespace qrm::bench
