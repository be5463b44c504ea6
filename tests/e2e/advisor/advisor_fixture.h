// What the qrm-advisor e2e tests share: the daemon started for a NodeFixture, its socket, slow
// polling and a spinning container.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "api/advisor_v1.grpc.pb.h"
#include "tests/e2e/host/node_fixture.h"

namespace qrm::e2e {

// testing::WaitFor polling at 10/s instead of 100/s: on a 2-CPU machine the test's own polls
// must not take the CPU the spinning containers are measured on.
inline bool WaitSlowly(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  return testing::WaitFor(
      [&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(90));
        return condition();
      },
      timeout);
}

// qrm-advisor for `node`, with `extra` flags after the defaults.
inline std::unique_ptr<testing::ChildProcess> StartAdvisor(NodeFixture& node,
                                                           std::vector<std::string> extra) {
  std::vector<std::string> argv = {QRM_ADVISOR,
                                   "--runtime-endpoint",
                                   "unix://" + node.containerd().socket(),
                                   "--admin-socket",
                                   node.AdminSocket(),
                                   "--socket",
                                   node.File("advisor.sock"),
                                   "--state-dir",
                                   node.File("state-advisor"),
                                   "--metrics-address",
                                   "",
                                   "--inventory-period",
                                   "1s",
                                   "--log-level",
                                   "debug"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<testing::ChildProcess>(argv, node.File("qrm-advisor.log"));
}

inline std::unique_ptr<::qrm::advisor::v1::Advisor::Stub> AdvisorStub(NodeFixture& node) {
  return ::qrm::advisor::v1::Advisor::NewStub(
      grpc::CreateChannel("unix:" + node.File("advisor.sock"), grpc::InsecureChannelCredentials()));
}

inline std::optional<::qrm::advisor::v1::GetUsageResponse> Usage(
    ::qrm::advisor::v1::Advisor::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  ::qrm::advisor::v1::GetUsageResponse r;
  if (!stub.GetUsage(&ctx, {}, &r).ok()) return std::nullopt;
  return r;
}

// A busybox container that burns one CPU.
inline ContainerSpec Spinner(const std::string& name) {
  ContainerSpec spec;
  spec.name = name;
  spec.command = {"sh", "-c", "while :; do :; done"};
  return spec;
}

}  // namespace qrm::e2e
