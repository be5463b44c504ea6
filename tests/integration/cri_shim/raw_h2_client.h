// RawH2Client: a gRPC client reduced to HTTP/2 frames over a Unix socket, for calls no gRPC
// library would make: headers that end the stream without a message, a message cut short by
// a disconnect, a reset before anything was sent. Frames per RFC 9113, header fields as HPACK
// literals without indexing (RFC 7541 6.2.2), so nothing needs the server's tables.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace qrm::shim::testing {

class RawH2Client {
 public:
  // Connects and sends the connection preface and an empty SETTINGS frame. Check ok().
  explicit RawH2Client(const std::string& socket_path);
  ~RawH2Client();
  RawH2Client(const RawH2Client&) = delete;
  RawH2Client& operator=(const RawH2Client&) = delete;

  bool ok() const { return fd_ >= 0; }
  // A gRPC request's HEADERS for `path` ("/runtime.v1.RuntimeService/Version").
  void Headers(uint32_t stream, std::string_view path, bool end_stream);
  // DATA carrying `payload` as is (a caller builds the 5-byte gRPC prefix itself).
  void Data(uint32_t stream, std::string_view payload, bool end_stream);
  void Reset(uint32_t stream, uint32_t error_code = 0x8 /* CANCEL */);
  // Closes the connection (as a client that dies would).
  void Close();
  // Reads frames until the server ends `stream` (HEADERS with END_STREAM, RST_STREAM), the
  // connection closes or `timeout` passes; true only for the first. Answers SETTINGS and PING.
  bool WaitStreamEnd(uint32_t stream, std::chrono::milliseconds timeout);

  // The 5-byte gRPC message prefix: uncompressed, `length` bytes announced.
  static std::string MessagePrefix(uint32_t length);

 private:
  void Frame(uint8_t type, uint8_t flags, uint32_t stream, std::string_view payload);
  bool ReadExact(char* out, size_t n, std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
};

}  // namespace qrm::shim::testing
