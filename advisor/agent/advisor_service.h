// AdvisorServer: the advisor's gRPC service (api/advisor_v1.proto) on a Unix socket whose
// peers are checked like qrm-host's admin socket: what qrmctl usage/prediction read.
#pragma once

#include <memory>
#include <string>

#include "advisor/agent/agent.h"
#include "advisor/agent/guard_runner.h"
#include "advisor/agent/node_reporter.h"
#include "api/advisor_v1.pb.h"
#include "common/grpc/peer_checked_listener.h"
#include "common/status.h"
#include "common/unix_socket.h"

namespace grpc {
class Server;
}

namespace qrm::advisor {

struct AdvisorServerOptions {
  std::string socket = "/var/run/qrm/advisor.sock";
  PeerAllowlist allow;
  SocketPermissions permissions;
};

// The answers, built from the agent's state (public for tests).
v1::GetUsageResponse BuildUsage(const Agent& agent, const v1::GetUsageRequest& request,
                                int64_t now);
v1::GetPredictionResponse BuildPrediction(const Agent& agent, int64_t now,
                                          const std::string& control_file);

class AdvisorServer {
 public:
  // `guard` may be null (no --guard-policy), and `reporter` (no node report); both must
  // outlive the server.
  AdvisorServer(AdvisorServerOptions options, const Agent& agent, std::string control_file,
                const GuardRunner* guard = nullptr, const NodeReporter* reporter = nullptr);
  ~AdvisorServer();
  Status Start();
  void Stop();  // idempotent

 private:
  class Service;
  AdvisorServerOptions options_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<PeerCheckedListener> listener_;
};

}  // namespace qrm::advisor
