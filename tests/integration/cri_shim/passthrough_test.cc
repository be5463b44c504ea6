// Opaque pass-through: whatever the shim does not intercept reaches the runtime byte for
// byte, with metadata and deadline, and the runtime's answer comes back unchanged.
#include <filesystem>
#include <future>

#include <catch2/catch.hpp>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/support/sync_stream.h>

#include "tests/integration/cri_shim/shim_fixture.h"

namespace qrm::shim::testing {
namespace {

using Catch::Matchers::Contains;

std::string Find(const std::multimap<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "<absent>" : it->second;
}

TEST_CASE("An unknown method passes through as raw bytes with its metadata",
          "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  // Not valid protobuf on purpose: the shim must not care.
  const std::string payload("\x01\x02\xff raw \x00 bytes", 16);
  const std::string binary("\x00\x01\x02\xfe", 4);
  const RawResult r = f.RawCall("/runtime.v1.RuntimeService/MadeUp", payload,
                                {{"x-request-id", "abc-123"}, {"x-trace-bin", binary}});
  INFO(r.status.error_message());
  REQUIRE(r.status.ok());
  CHECK(r.response == "echo:" + payload);
  CHECK(Find(r.initial, "x-made-up") == "yes");

  const auto calls = f.runtime().Calls("/MadeUp");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].request == payload);
  CHECK(Find(calls[0].metadata, "x-request-id") == "abc-123");
  CHECK(Find(calls[0].metadata, "x-trace-bin") == binary);

  CHECK(f.shim().counters().unknown_methods.calls == 1);
  CHECK(f.shim().counters().passthrough_calls >= 1);
  CHECK(f.shim().counters().intercepted_calls == 0);
}

TEST_CASE("The runtime's status codes and messages come back unchanged",
          "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  // A method our .proto knows that the runtime does not implement.
  cri::StatusRequest status_request;
  const RawResult unimplemented =
      f.RawCall("/runtime.v1.RuntimeService/Status", status_request.SerializeAsString());
  CHECK(unimplemented.status.error_code() == grpc::StatusCode::UNIMPLEMENTED);
  CHECK(unimplemented.status.error_message() ==
        "fake runtime: /runtime.v1.RuntimeService/Status is not implemented");

  // A service nobody knows.
  const RawResult unknown_service = f.RawCall("/nobody.Knows/This", "x");
  CHECK(unknown_service.status.error_code() == grpc::StatusCode::UNIMPLEMENTED);
  CHECK(unknown_service.status.error_message() ==
        "fake runtime: /nobody.Knows/This is not implemented");

  // NotFound with the runtime's message, through a typed stub like the kubelet's.
  cri::ContainerStatusRequest request;
  request.set_container_id("nope");
  cri::ContainerStatusResponse response;
  const grpc::Status s = f.Runtime().ContainerStatus(f.Context().get(), request, &response);
  CHECK(s.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(s.error_message() == "container \"nope\" not found");

  // A runtime failure of an ordinary call, with details.
  f.runtime().FailWith("/ListImages", grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                                   "too many images", "details-bytes"));
  const RawResult failed = f.RawCall("/runtime.v1.ImageService/ListImages", "");
  CHECK(failed.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(failed.status.error_message() == "too many images");
  CHECK(failed.status.error_details() == "details-bytes");
  CHECK(f.shim().counters().errors >= 4);
  CHECK(f.shim().counters().Method("/runtime.v1.ImageService/ListImages").errors == 1);
}

TEST_CASE("Response metadata of the runtime reaches the kubelet", "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  cri::VersionRequest request;
  const RawResult r = f.RawCall("/runtime.v1.RuntimeService/Version", request.SerializeAsString());
  REQUIRE(r.status.ok());
  cri::VersionResponse version;
  REQUIRE(version.ParseFromString(r.response));
  CHECK(version.runtime_name() == "fake");
  CHECK(Find(r.initial, "x-fake-initial") == "v");
  CHECK(Find(r.trailing, "x-fake-trailer") == "t");
  CHECK(f.shim().counters().passthrough_latency_count >= 1);
  CHECK(f.shim().counters().passthrough_latency_ns_sum > 0);
}

TEST_CASE("The kubelet's deadline reaches the runtime, and expiry cancels it there",
          "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  const auto before = std::chrono::system_clock::now();
  REQUIRE(
      f.RawCall("/runtime.v1.RuntimeService/Version", "", {}, std::chrono::seconds(5)).status.ok());
  auto calls = f.runtime().Calls("/Version");
  REQUIRE_FALSE(calls.empty());
  const auto deadline = calls.back().deadline;
  CHECK(deadline > before + std::chrono::milliseconds(4500));
  CHECK(deadline < before + std::chrono::milliseconds(5500));

  // No deadline stays no deadline (not some proxy default).
  f.runtime().ClearCalls();
  REQUIRE(f.RawCall("/runtime.v1.RuntimeService/Version", "", {}, std::nullopt).status.ok());
  calls = f.runtime().Calls("/Version");
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].deadline > std::chrono::system_clock::now() + std::chrono::hours(24 * 365));

  // The runtime is slower than the kubelet's deadline.
  const RawResult slow =
      f.RawCall("/runtime.v1.RuntimeService/SlowCall", "", {}, std::chrono::milliseconds(300));
  CHECK(slow.status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
  CHECK(WaitFor([&] { return f.runtime().slow_call_cancelled(); }, std::chrono::seconds(5)));
}

TEST_CASE("Messages over 4 MiB pass both ways and the 16 MiB limit holds",
          "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  // A 5 MiB request, echoed back: over gRPC's 4 MiB default in both directions.
  const std::string big(5 << 20, 'b');
  const RawResult echoed = f.RawCall("/runtime.v1.RuntimeService/MadeUp", big);
  INFO(echoed.status.error_message());
  REQUIRE(echoed.status.ok());
  CHECK(echoed.response.size() == big.size() + 5);
  CHECK(f.runtime().Calls("/MadeUp").at(0).request == big);

  // A 6 MiB ListContainers through a typed stub like the kubelet's.
  const std::string sandbox = f.runtime().AddSandbox("uid-big", "big", "default");
  for (int i = 0; i < 6; ++i) f.runtime().AddContainer(sandbox, "c" + std::to_string(i));
  f.runtime().SetListPadding(1 << 20);
  cri::ListContainersResponse list;
  const grpc::Status s =
      f.Runtime().ListContainers(f.Context().get(), cri::ListContainersRequest(), &list);
  INFO(s.error_message());
  REQUIRE(s.ok());
  CHECK(list.containers_size() == 6);
  CHECK(list.ByteSizeLong() > (6u << 20));
  CHECK(list.containers(5).annotations().at("qrm.test/padding").size() == (1u << 20));

  // Over the limit: refused, not truncated.
  const RawResult too_big =
      f.RawCall("/runtime.v1.RuntimeService/MadeUp", std::string(17 << 20, 'x'));
  CHECK(too_big.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_CASE("A smaller configured message limit is enforced towards both sides",
          "[cri_shim][passthrough]") {
  ShimFixture f;
  ShimOptions options = f.Options();
  options.max_message_bytes = 1 << 20;
  f.StartAll(options);
  CHECK(f.RawCall("/runtime.v1.RuntimeService/MadeUp", std::string(900 << 10, 'a')).status.ok());
  // The response (request + "echo:") crosses 1 MiB only on the way back.
  const RawResult back =
      f.RawCall("/runtime.v1.RuntimeService/MadeUp", std::string((1 << 20) - 5 - 16, 'a'));
  CHECK(back.status.ok());
  CHECK(f.RawCall("/runtime.v1.RuntimeService/MadeUp", std::string(1 << 20, 'a'))
            .status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_CASE("Server streaming CRI methods stream through", "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto reader = f.Runtime().GetContainerEvents(&context, cri::GetEventsRequest());
  std::vector<std::string> ids;
  cri::ContainerEventResponse event;
  while (reader->Read(&event)) ids.push_back(event.container_id());
  const grpc::Status s = reader->Finish();
  INFO(s.error_message());
  REQUIRE(s.ok());
  CHECK(ids == std::vector<std::string>{"e1", "e2", "e3"});
}

TEST_CASE("An unknown bidirectional stream passes through message by message",
          "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  context.AddMetadata("x-chat-user", "kubelet");
  auto stream = std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>>(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          f.KubeletChannel().get(),
          grpc::internal::RpcMethod("/qrm.test.Echo/Chat",
                                    grpc::internal::RpcMethod::BIDI_STREAMING),
          &context));
  std::vector<std::string> answers;
  for (const std::string text : {"one", "two", "three"}) {
    grpc::Slice slice(text);
    REQUIRE(stream->Write(grpc::ByteBuffer(&slice, 1)));
    grpc::ByteBuffer reply;
    REQUIRE(stream->Read(&reply));  // one answer per message, before the next is sent
    grpc::Slice out;
    REQUIRE(reply.DumpToSingleSlice(&out).ok());
    answers.emplace_back(reinterpret_cast<const char*>(out.begin()), out.size());
  }
  REQUIRE(stream->WritesDone());
  grpc::ByteBuffer extra;
  CHECK_FALSE(stream->Read(&extra));
  const grpc::Status s = stream->Finish();
  INFO(s.error_message());
  REQUIRE(s.ok());
  CHECK(answers == std::vector<std::string>{"eno", "owt", "eerht"});
  auto trailing = context.GetServerTrailingMetadata();
  auto it = trailing.find("x-chat");
  REQUIRE(it != trailing.end());
  CHECK(std::string(it->second.data(), it->second.size()) == "done");
  REQUIRE(f.runtime().Calls("/Chat").size() == 1);
  CHECK(Find(f.runtime().Calls("/Chat")[0].metadata, "x-chat-user") == "kubelet");
}

TEST_CASE("Exec URLs come back untouched", "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  const std::string sandbox = f.runtime().AddSandbox("uid-exec", "exec", "default");
  const std::string id = f.runtime().AddContainer(sandbox, "app");
  cri::ExecRequest request;
  request.set_container_id(id);
  request.add_cmd("sh");
  cri::ExecResponse response;
  REQUIRE(f.Runtime().Exec(f.Context().get(), request, &response).ok());
  CHECK(response.url() == "http://127.0.0.1:10010/exec/" + id);
}

TEST_CASE("Many concurrent pass-through calls", "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  std::vector<std::future<bool>> results;
  for (int i = 0; i < 64; ++i) {
    results.push_back(std::async(std::launch::async, [&f, i] {
      const std::string payload = "call-" + std::to_string(i);
      const RawResult r = f.RawCall("/runtime.v1.RuntimeService/MadeUp", payload);
      return r.status.ok() && r.response == "echo:" + payload;
    }));
  }
  int ok = 0;
  for (auto& r : results) ok += r.get() ? 1 : 0;
  CHECK(ok == 64);
}

TEST_CASE("Image service calls go to the image endpoint, the rest to the runtime",
          "[cri_shim][passthrough]") {
  ShimFixture f;
  FakeRuntime images(f.File("images.sock"));
  ShimOptions options = f.Options();
  options.image_endpoint = images.socket_path();  // a plain path works as well as unix://
  f.StartAll(options);
  const RawResult list = f.RawCall("/runtime.v1.ImageService/ListImages", "");
  CHECK(list.status.error_message() ==
        "fake runtime: /runtime.v1.ImageService/ListImages is not implemented");
  CHECK(images.Calls("/ListImages").size() == 1);
  CHECK(f.runtime().Calls("/ListImages").empty());
  // A method of the image service our .proto does not know goes there too.
  f.RawCall("/runtime.v1.ImageService/NewImageCall", "x");
  CHECK(images.Calls("/NewImageCall").size() == 1);
  REQUIRE(f.RawCall("/runtime.v1.RuntimeService/Version", "").status.ok());
  CHECK(images.Calls("/Version").empty());
  CHECK(f.runtime().Calls("/Version").size() >= 1);
}

TEST_CASE("Stop cancels calls still in flight after the grace period", "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();  // shutdown_grace 500 ms
  auto slow = std::async(std::launch::async, [&f] {
    return f.RawCall("/runtime.v1.RuntimeService/SlowCall", "", {}, std::chrono::seconds(10));
  });
  REQUIRE(WaitFor([&] { return !f.runtime().Calls("/SlowCall").empty(); }));
  const auto start = std::chrono::steady_clock::now();
  f.shim().Stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
  const RawResult r = slow.get();
  // The runtime answers after 1 s, beyond the 500 ms grace: the kubelet's call is cut.
  CHECK_FALSE(r.status.ok());
  CHECK_FALSE(std::filesystem::exists(f.cri_socket()));
}

// Opens /qrm.test.Events/Watch through the shim (a request, then a stream the runtime keeps
// open, like the kubelet's GetContainerEvents) and reads the first event.
std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> Watch(ShimFixture& f,
                                                            grpc::ClientContext& context) {
  grpc::Slice slice(std::string("watch"));
  auto stream = std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>>(
      grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
          f.KubeletChannel().get(),
          grpc::internal::RpcMethod("/qrm.test.Events/Watch",
                                    grpc::internal::RpcMethod::SERVER_STREAMING),
          &context, grpc::ByteBuffer(&slice, 1)));
  grpc::ByteBuffer event;
  REQUIRE(stream->Read(&event));
  return stream;
}

TEST_CASE("A kubelet cancelling a long-lived stream cancels it at the runtime",
          "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();
  grpc::ClientContext context;
  auto stream = Watch(f, context);
  context.TryCancel();
  CHECK(stream->Finish().error_code() == grpc::StatusCode::CANCELLED);
  CHECK(WaitFor([&] { return f.runtime().Cancellations("/Watch") == 1; }));
  // The shim forgets the call: it still serves, and stops without waiting for it.
  CHECK(f.RawCall("/runtime.v1.RuntimeService/Version", "").status.ok());
  const auto start = std::chrono::steady_clock::now();
  f.shim().Stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(400));
}

TEST_CASE("Stop ends long-lived streams after the grace period", "[cri_shim][passthrough]") {
  ShimFixture f;
  f.StartAll();  // shutdown_grace 500 ms
  grpc::ClientContext context;
  auto stream = Watch(f, context);
  const auto start = std::chrono::steady_clock::now();
  f.shim().Stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
  grpc::ByteBuffer more;
  CHECK_FALSE(stream->Read(&more));
  CHECK_FALSE(stream->Finish().ok());
  CHECK(WaitFor([&] { return f.runtime().Cancellations("/Watch") == 1; }));
}

}  // namespace
}  // namespace qrm::shim::testing
