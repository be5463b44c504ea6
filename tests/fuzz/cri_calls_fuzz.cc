// Fuzzes the CRI shim's call handling (cri-shim/unary_call.h, stream_call.h, interceptors.h)
// with calls a gRPC library would never make: a real shim, with a real qrm Host and the
// integration tests' fake runtime behind it, is driven over its Unix socket with raw HTTP/2
// frames (tests/integration/cri_shim/raw_h2_client.h).
//
// Input: byte 0 picks the method (every method our .proto declares, unary and streaming, both
// services, plus one it does not), byte 1 the shape of the call, byte 2 a length, the rest is
// the request message:
//   0 headers with END_STREAM, no message         4 the message, then RST_STREAM at once
//   1 headers, then RST_STREAM                     5 the message in two DATA frames, then an
//   2 headers, part of the message, disconnect        empty DATA with END_STREAM
//   3 the whole message with END_STREAM            6 two messages with END_STREAM
//                                                  7 a message longer than announced
// Properties: the process never aborts (gRPC aborts on a null message handed to it, what
// an incomplete unary call used to cause); every call that half-closes (0, 3, 5, 6, 7) is
// answered within 10 s (trailers or RST_STREAM), i.e. nothing hangs; and after every 32
// inputs a well-formed Version through a fresh connection is still answered.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "api/cri_runtime_v1.grpc.pb.h"
#include "common/log.h"
#include "cri-shim/cri_shim.h"
#include "cri-shim/method_table.h"
#include "qrm/host/host.h"
#include "tests/integration/cri_shim/fake_runtime.h"
#include "tests/integration/cri_shim/raw_h2_client.h"

namespace {

using qrm::shim::testing::FakeRuntime;
using qrm::shim::testing::RawH2Client;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "cri_calls_fuzz: %s\n", what);
  std::abort();
}

// One shim for the whole run (starting one per input would measure start-up, not calls).
struct World {
  World() {
    char tmpl[] = "/tmp/cri_calls_fuzz.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) Fail("mkdtemp");
    dir = tmpl;
    runtime = std::make_unique<FakeRuntime>(dir + "/runtime.sock");
    qrm::host::HostOptions host_options;
    host_options.registry.plugin_dir = dir;
    host_options.state_dir = dir + "/state";
    host_options.reconcile_period = std::chrono::milliseconds(0);
    host_options.worker_threads = 2;
    host_options.numa = *qrm::topology::NumaInfo::Create({0, 1});
    host = std::make_unique<qrm::host::Host>(host_options);
    qrm::shim::ShimOptions options;
    options.cri_socket = dir + "/cri.sock";
    options.runtime_endpoint = "unix://" + runtime->socket_path();
    options.runtime_timeout = std::chrono::milliseconds(3000);
    options.shutdown_grace = std::chrono::milliseconds(100);
    options.admission_threads = 2;
    auto created = qrm::shim::CriShim::Create(options, *host);
    if (!created.ok()) Fail("CriShim::Create");
    shim = std::move(*created);
    if (!host->Start(shim->applier(), &shim->view()).ok()) Fail("Host::Start");
    if (!shim->ConnectRuntime().ok() || !shim->Resync().ok() || !shim->Serve().ok()) {
      Fail("the shim does not start");
    }
    qrm::shim::MethodTable table;
    methods = table.Names();
    methods.push_back("/runtime.v1.RuntimeService/NotInOurProto");
  }

  std::string socket() const { return dir + "/cri.sock"; }

  void CheckServing() const {
    auto channel = grpc::CreateChannel("unix://" + socket(), grpc::InsecureChannelCredentials());
    auto stub = ::runtime::v1::RuntimeService::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ::runtime::v1::VersionResponse response;
    if (!stub->Version(&context, ::runtime::v1::VersionRequest(), &response).ok()) {
      Fail("the shim stopped answering Version");
    }
  }

  std::string dir;
  std::unique_ptr<FakeRuntime> runtime;
  std::unique_ptr<qrm::host::Host> host;
  std::unique_ptr<qrm::shim::CriShim> shim;
  std::vector<std::string> methods;
};

World& TheWorld() {
  static World* world = new World();  // never destroyed: the fuzzer exits, not returns
  return *world;
}

// Sends the call; true if it half-closed (so an answer is due).
bool Send(RawH2Client& c, const std::string& method, uint8_t shape, uint8_t len,
          const std::string& message) {
  const uint32_t n = static_cast<uint32_t>(message.size());
  const std::string framed = RawH2Client::MessagePrefix(n) + message;
  switch (shape % 8) {
    case 0: c.Headers(1, method, true); return true;
    case 1:
      c.Headers(1, method, false);
      c.Reset(1);
      return false;
    case 2:
      c.Headers(1, method, false);
      c.Data(1, RawH2Client::MessagePrefix(n + 1 + len) + message, false);
      c.Close();
      return false;
    case 3:
      c.Headers(1, method, false);
      c.Data(1, framed, true);
      return true;
    case 4:
      c.Headers(1, method, false);
      c.Data(1, framed, false);
      c.Reset(1);
      return false;
    case 5: {
      const size_t cut = message.empty() ? 0 : len % framed.size();
      c.Headers(1, method, false);
      c.Data(1, framed.substr(0, cut), false);
      c.Data(1, framed.substr(cut), false);
      c.Data(1, "", true);
      return true;
    }
    case 6:
      c.Headers(1, method, false);
      c.Data(1, framed + framed, true);
      return true;
    default:
      c.Headers(1, method, false);
      c.Data(1, RawH2Client::MessagePrefix(n > len ? n - len - 1 : 0) + message, true);
      return true;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  qrm::ConfigureLogging("off");
  TheWorld();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  World& world = TheWorld();
  const std::string& method = world.methods[data[0] % world.methods.size()];
  const std::string message(reinterpret_cast<const char*>(data) + 3, size - 3);
  RawH2Client client(world.socket());
  if (!client.ok()) Fail("cannot connect to the shim");
  if (Send(client, method, data[1], data[2], message) &&
      !client.WaitStreamEnd(1, std::chrono::seconds(10))) {
    Fail("a half-closed call was never answered");
  }
  client.Close();
  static int calls = 0;
  if (++calls % 32 == 0) world.CheckServing();
  return 0;
}
