// The floor under the shim's pass-through cost: one extra C++ gRPC hop on this machine. A
// trivial in-process callback server answers Version with a constant; timing a client call to
// it gives what any proxy written with gRPC C++ adds at least (a server side and a client
// side of a unary call over a unix socket), whatever its own code does.
#pragma once

#include <memory>
#include <string>

namespace qrm::bench {

class GrpcHopFloor {
 public:
  // Serves runtime.v1 Version (only) on the unix socket `socket_path`.
  explicit GrpcHopFloor(const std::string& socket_path);
  ~GrpcHopFloor();
  GrpcHopFloor(const GrpcHopFloor&) = delete;
  GrpcHopFloor& operator=(const GrpcHopFloor&) = delete;

  const std::string& socket_path() const { return socket_path_; }

 private:
  struct Server;
  const std::string socket_path_;
  std::unique_ptr<Server> server_;
};

}  // namespace qrm::bench
