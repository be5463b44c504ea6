// Calls whose request message never fully arrives, over real sockets: headers that end the
// stream without a message, a reset before the message, a disconnect mid-message, gRPC
// clients that cancel or whose deadline expires first, and a runtime that answers OK without
// a message. Each used to abort the process (gRPC "API misuse ... INVALID_MESSAGE", then an
// assertion): the shim must answer such calls itself, forward nothing, and keep serving.
#include <thread>

#include <catch2/catch.hpp>
#include <grpcpp/generic/generic_stub.h>

#include "cri-shim/method_table.h"
#include "cri-shim/refusals.h"
#include "tests/integration/cri_shim/raw_h2_client.h"
#include "tests/integration/cri_shim/shim_fixture.h"

namespace qrm::shim::testing {
namespace {

using namespace std::chrono_literals;

// Every unary method our .proto declares: pass-through and intercepted, both services.
std::vector<std::string> UnaryMethods() {
  MethodTable table;
  std::vector<std::string> out;
  for (const std::string& name : table.Names()) {
    if (table.Find(name)->unary) out.push_back(name);
  }
  return out;
}

// The shim still answers: a typed Version through a fresh channel.
void RequireServing(ShimFixture& f) {
  auto channel =
      grpc::CreateChannel("unix://" + f.cri_socket(), grpc::InsecureChannelCredentials());
  auto stub = cri::RuntimeService::NewStub(channel);
  cri::VersionRequest request;
  cri::VersionResponse response;
  const grpc::Status s = stub->Version(ShimFixture::Context().get(), request, &response);
  INFO(s.error_message());
  REQUIRE(s.ok());
  CHECK(response.runtime_name() == "fake");
}

// Nothing of `methods` reached the runtime.
void RequireNothingForwarded(ShimFixture& f, const std::vector<std::string>& methods) {
  for (const auto& call : f.runtime().Calls()) {
    for (const auto& m : methods) {
      INFO(m);
      CHECK(call.method != m);
    }
  }
}

TEST_CASE("A unary call that ends without a request message is answered, not forwarded",
          "[cri_shim][incomplete]") {
  ShimFixture f;
  f.StartAll();
  f.runtime().ClearCalls();  // the shim's own start-up calls
  const auto methods = UnaryMethods();
  REQUIRE(methods.size() > 30);
  for (const std::string& method : methods) {
    INFO(method);
    RawH2Client client(f.cri_socket());
    REQUIRE(client.ok());
    client.Headers(1, method, /*end_stream=*/true);
    CHECK(client.WaitStreamEnd(1, 5s));  // answered (trailers), the connection alive
  }
  RequireNothingForwarded(f, methods);
  RequireServing(f);
  CHECK(RefusedCount("Version", RefusalReason::kNoRequest) >= 1);
  CHECK(RefusedCount("CreateContainer", RefusalReason::kNoRequest) >= 1);
}

TEST_CASE("A unary call reset before its message or cut mid-message leaves the shim serving",
          "[cri_shim][incomplete]") {
  ShimFixture f;
  f.StartAll();
  f.runtime().ClearCalls();
  const auto methods = UnaryMethods();
  for (const std::string& method : methods) {
    INFO(method);
    {  // the client cancels before sending anything
      RawH2Client client(f.cri_socket());
      REQUIRE(client.ok());
      client.Headers(1, method, false);
      client.Reset(1);
      client.Headers(3, method, false);  // and once more on a second stream
      client.Reset(3);
      CHECK_FALSE(client.WaitStreamEnd(5, 100ms));  // lets the server read it all
    }
    {  // 100 bytes announced, 10 sent, then the connection goes away
      RawH2Client client(f.cri_socket());
      REQUIRE(client.ok());
      client.Headers(1, method, false);
      client.Data(1, RawH2Client::MessagePrefix(100) + std::string(10, 'x'), false);
      CHECK_FALSE(client.WaitStreamEnd(3, 50ms));
      client.Close();
    }
  }
  std::this_thread::sleep_for(300ms);  // the server notices the last disconnects
  RequireNothingForwarded(f, methods);
  RequireServing(f);
}

TEST_CASE("gRPC clients that cancel or time out before the request arrives",
          "[cri_shim][incomplete]") {
  ShimFixture f;
  f.StartAll();
  grpc::GenericStub stub(f.KubeletChannel());
  grpc::CompletionQueue cq;
  for (const char* method :
       {"/runtime.v1.RuntimeService/Version", "/runtime.v1.RuntimeService/CreateContainer",
        "/runtime.v1.ImageService/ImageStatus"}) {
    INFO(method);
    // Headers sent, then cancelled with no message (what `crictl --timeout 1ms` can do).
    grpc::ClientContext context;
    auto call = stub.PrepareCall(&context, method, &cq);
    void* tag = nullptr;
    bool ok = false;
    call->StartCall(reinterpret_cast<void*>(1));
    REQUIRE(cq.Next(&tag, &ok));
    std::this_thread::sleep_for(50ms);
    context.TryCancel();
    grpc::Status status;
    call->Finish(&status, reinterpret_cast<void*>(2));
    REQUIRE(cq.Next(&tag, &ok));
    CHECK(status.error_code() == grpc::StatusCode::CANCELLED);
  }
  // Very short deadlines, many times: some expire before, some during the call.
  for (int i = 0; i < 200; ++i) {
    cri::VersionResponse response;
    auto context = ShimFixture::Context(std::chrono::milliseconds(i % 3));
    (void)f.Runtime().Version(context.get(), cri::VersionRequest(), &response);
  }
  std::this_thread::sleep_for(200ms);
  RequireServing(f);
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
}

TEST_CASE("A runtime answer of OK without a message becomes INTERNAL, not a crash",
          "[cri_shim][incomplete]") {
  ShimFixture f;
  f.StartAll();
  f.runtime().FailWith("/Status", grpc::Status::OK);  // finishes OK without writing
  const RawResult r =
      f.RawCall("/runtime.v1.RuntimeService/Status", cri::StatusRequest().SerializeAsString());
  CHECK(r.status.error_code() == grpc::StatusCode::INTERNAL);
  CHECK_THAT(r.status.error_message(), Catch::Matchers::Contains("without a message"));
  CHECK(RefusedCount("Status", RefusalReason::kNoResponse) >= 1);
  RequireServing(f);
}

}  // namespace
}  // namespace qrm::shim::testing
