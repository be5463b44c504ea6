// qrm-socket-probe: calls Register on a qrm registration socket as another user, for the
// peer-credential tests (a forked gRPC client inside the test process would inherit the
// parent's gRPC threads; a fresh process does not).
//
//   qrm-socket-probe SOCKET UID GID
//
// Drops to UID/GID (supplementary groups cleared), sends a Register whose endpoint escapes
// the plugin directory, and prints and exits with the gRPC status code: 3 (INVALID_ARGUMENT) means
// the host read the request, 14 (UNAVAILABLE) that the connection was refused. 100+ is a setup
// error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <grp.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: qrm-socket-probe SOCKET UID GID\n");
    return 100;
  }
  const std::string socket = argv[1];
  const uid_t uid = static_cast<uid_t>(std::strtoul(argv[2], nullptr, 10));
  const gid_t gid = static_cast<gid_t>(std::strtoul(argv[3], nullptr, 10));
  if (::getuid() != uid) {
    // Order matters: groups and gid while still privileged, the uid last.
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) {
      std::perror("qrm-socket-probe: dropping privileges");
      return 101;
    }
  }
  auto stub = ::resourceplugin::v1alpha1::Registration::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
  ::resourceplugin::v1alpha1::RegisterRequest req;
  req.set_version("v1alpha1");
  req.set_resource_name("probe.qrm.io/probe");
  req.set_endpoint("../escape.sock");  // refused by endpoint confinement if read
  ::resourceplugin::v1alpha1::Empty resp;
  const grpc::Status status = stub->Register(&ctx, req, &resp);
  std::printf("%d %s\n", static_cast<int>(status.error_code()), status.error_message().c_str());
  return static_cast<int>(status.error_code());
}
