#include "tests/integration/cri_shim/raw_h2_client.h"

#include <cerrno>
#include <cstring>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace qrm::shim::testing {
namespace {

constexpr uint8_t kData = 0x0, kHeaders = 0x1, kRstStream = 0x3, kSettings = 0x4, kPing = 0x6,
                  kGoAway = 0x7;
constexpr uint8_t kEndStream = 0x1, kAck = 0x1, kEndHeaders = 0x4;
constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// HPACK integer with an N-bit prefix (RFC 7541 5.1); `first` holds the pattern bits.
void PutInt(std::string* out, uint8_t first, int prefix_bits, size_t value) {
  const size_t max = (1u << prefix_bits) - 1;
  if (value < max) {
    out->push_back(static_cast<char>(first | value));
    return;
  }
  out->push_back(static_cast<char>(first | max));
  value -= max;
  while (value >= 128) {
    out->push_back(static_cast<char>(0x80 | (value & 0x7f)));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Literal header field without indexing, new name, no Huffman coding.
void PutField(std::string* out, std::string_view name, std::string_view value) {
  out->push_back(0x00);
  PutInt(out, 0x00, 7, name.size());
  out->append(name);
  PutInt(out, 0x00, 7, value.size());
  out->append(value);
}

}  // namespace

RawH2Client::RawH2Client(const std::string& socket_path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof(addr.sun_path) - 1);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Close();
    return;
  }
  (void)::send(fd_, kPreface.data(), kPreface.size(), MSG_NOSIGNAL);
  Frame(kSettings, 0, 0, "");
}

RawH2Client::~RawH2Client() {
  Close();
}

void RawH2Client::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void RawH2Client::Frame(uint8_t type, uint8_t flags, uint32_t stream, std::string_view payload) {
  if (fd_ < 0) return;
  std::string frame;
  const uint32_t n = static_cast<uint32_t>(payload.size());
  frame.push_back(static_cast<char>(n >> 16));
  frame.push_back(static_cast<char>(n >> 8));
  frame.push_back(static_cast<char>(n));
  frame.push_back(static_cast<char>(type));
  frame.push_back(static_cast<char>(flags));
  for (int shift = 24; shift >= 0; shift -= 8) {
    frame.push_back(static_cast<char>((stream >> shift) & (shift == 24 ? 0x7f : 0xff)));
  }
  frame.append(payload);
  // A peer that closed first is what some tests provoke: errors are ignored.
  (void)::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL);
}

void RawH2Client::Headers(uint32_t stream, std::string_view path, bool end_stream) {
  std::string block;
  PutField(&block, ":method", "POST");
  PutField(&block, ":scheme", "http");
  PutField(&block, ":path", path);
  PutField(&block, ":authority", "localhost");
  PutField(&block, "content-type", "application/grpc");
  PutField(&block, "te", "trailers");
  Frame(kHeaders, kEndHeaders | (end_stream ? kEndStream : 0), stream, block);
}

void RawH2Client::Data(uint32_t stream, std::string_view payload, bool end_stream) {
  Frame(kData, end_stream ? kEndStream : 0, stream, payload);
}

void RawH2Client::Reset(uint32_t stream, uint32_t error_code) {
  std::string code;
  for (int shift = 24; shift >= 0; shift -= 8)
    code.push_back(static_cast<char>(error_code >> shift));
  Frame(kRstStream, 0, stream, code);
}

std::string RawH2Client::MessagePrefix(uint32_t length) {
  std::string prefix(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) prefix.push_back(static_cast<char>(length >> shift));
  return prefix;
}

bool RawH2Client::ReadExact(char* out, size_t n, std::chrono::steady_clock::time_point deadline) {
  while (n > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t got = ::recv(fd_, out, n, 0);
    if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) return false;
    if (got < 0) continue;
    out += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool RawH2Client::WaitStreamEnd(uint32_t stream, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (fd_ >= 0) {
    unsigned char header[9];
    if (!ReadExact(reinterpret_cast<char*>(header), sizeof(header), deadline)) return false;
    const size_t length = (size_t{header[0]} << 16) | (size_t{header[1]} << 8) | header[2];
    const uint8_t type = header[3], flags = header[4];
    const uint32_t id = ((uint32_t{header[5]} & 0x7f) << 24) | (uint32_t{header[6]} << 16) |
                        (uint32_t{header[7]} << 8) | header[8];
    std::string payload(length, '\0');
    if (!ReadExact(payload.data(), length, deadline)) return false;
    if (type == kSettings && (flags & kAck) == 0) Frame(kSettings, kAck, 0, "");
    if (type == kPing && (flags & kAck) == 0) Frame(kPing, kAck, 0, payload);
    if (type == kGoAway) return false;
    if (id != stream) continue;
    if (type == kRstStream) return true;
    if (type == kHeaders && (flags & kEndStream) != 0) return true;
  }
  return false;
}

}  // namespace qrm::shim::testing
