// A plugin binary run as a process (--no-register, serving on its socket) and a gRPC client
// to it. Shared by the memory and NIC plugin process tests.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "testing/child_process.h"
#include "testing/temp_dir.h"

namespace qrm::plugin_testing {

namespace pb = ::resourceplugin::v1alpha1;

class PluginProcess {
 public:
  // Runs `binary --no-register --plugin-dir <dir> --socket-name plugin.sock <args...>`, its
  // output in <dir>/plugin.log.
  PluginProcess(const std::string& binary, const std::vector<std::string>& args,
                const std::string& dir)
      : socket_(dir + "/plugin.sock"), log_(dir + "/plugin.log") {
    std::vector<std::string> argv{binary, "--no-register", "--plugin-dir",
                                  dir,    "--socket-name", "plugin.sock"};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<qrm::testing::ChildProcess>(argv, log_);
  }

  // Waits until the plugin answers GetResourcePluginOptions (false if it exits first, or
  // 20 s pass). The channel is made once the socket exists: a channel that failed to connect
  // backs off for seconds before its next attempt.
  bool WaitServing() {
    const bool socket = qrm::testing::WaitFor(
        [&] { return !process_->running() || ::access(socket_.c_str(), F_OK) == 0; },
        std::chrono::seconds(20));
    if (!socket || !process_->running()) return false;
    channel_ = grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials());
    stub_ = pb::ResourcePlugin::NewStub(channel_);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ctx.set_wait_for_ready(true);
    pb::ResourcePluginOptions options;
    return stub_->GetResourcePluginOptions(&ctx, pb::Empty(), &options).ok();
  }

  pb::ResourcePlugin::Stub& stub() { return *stub_; }  // after WaitServing
  qrm::testing::ChildProcess& process() { return *process_; }
  std::string Log() const { return qrm::testing::ReadFile(log_); }

  // A context with a 5 s deadline, for one call.
  static std::unique_ptr<grpc::ClientContext> Context() {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return ctx;
  }

 private:
  std::string socket_;
  std::string log_;
  std::unique_ptr<qrm::testing::ChildProcess> process_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::ResourcePlugin::Stub> stub_;
};

}  // namespace qrm::plugin_testing
