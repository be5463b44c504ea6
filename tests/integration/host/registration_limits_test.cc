// The Register RPC against hostile clients, on the real registration socket: oversized
// requests get an answer and leave bounded log lines, a flood of refusals does not flood the
// log, and calls naming a socket that never answers do not take a thread each.
#include <filesystem>
#include <mutex>

#include <grpcpp/grpcpp.h>
#include <spdlog/sinks/base_sink.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "common/log.h"
#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

// Counts the lines written to a logger and remembers the longest.
class CountingSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  size_t Lines(const std::string& containing) {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const auto& line : lines_) n += line.find(containing) != std::string::npos;
    return n;
  }
  size_t Longest() {
    std::lock_guard lock(mutex_);
    size_t longest = 0;
    for (const auto& line : lines_) longest = std::max(longest, line.size());
    return longest;
  }
  void Clear() {
    std::lock_guard lock(mutex_);
    lines_.clear();
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines_.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}

 private:
  std::vector<std::string> lines_;
};

std::shared_ptr<CountingSink> RegistryLines() {
  static std::shared_ptr<CountingSink> sink = [] {
    auto s = std::make_shared<CountingSink>();
    Logger("registry")->sinks().push_back(s);
    return s;
  }();
  sink->Clear();
  return sink;
}

std::unique_ptr<pb::Registration::Stub> Client(Host& host) {
  return pb::Registration::NewStub(grpc::CreateChannel(
      "unix:" + host.registry().registration_socket_path(), grpc::InsecureChannelCredentials()));
}

grpc::Status Register(pb::Registration::Stub& stub, const pb::RegisterRequest& req) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  pb::Empty resp;
  return stub.Register(&ctx, req, &resp);
}

int Threads() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

TEST_CASE("an oversized Register gets an answer and a bounded log line", "[registry][limits]") {
  auto lines = RegistryLines();
  HostFixture f;
  Host& host = f.StartHost();
  auto stub = Client(host);
  const size_t size = GENERATE(size_t{1024}, size_t{4} << 20);
  pb::RegisterRequest req;
  req.set_version(std::string(size, 'v'));
  req.set_resource_name("test.qrm.io/big");
  req.set_endpoint("big.sock");
  const grpc::Status s = Register(*stub, req);
  INFO(size << " bytes: " << s.error_code() << " " << s.error_message().substr(0, 200));
  CHECK((s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
         s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED));
  CHECK(s.error_message().size() < 512);
  CHECK(lines->Longest() < 1024);
  CHECK(host.registry().Find("test.qrm.io/big") == nullptr);
}

TEST_CASE("3,000 refused registrations produce a bounded number of log lines",
          "[registry][limits]") {
  auto lines = RegistryLines();
  HostFixture f;
  Host& host = f.StartHost();
  auto stub = Client(host);
  pb::RegisterRequest req;
  req.set_version("v0");
  req.set_resource_name("test.qrm.io/flood");
  req.set_endpoint("flood.sock");
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    refused += Register(*stub, req).error_code() == grpc::StatusCode::INVALID_ARGUMENT;
  }
  CHECK(refused == 3000);  // every caller is still answered
  const size_t written = lines->Lines("registration refused");
  INFO(written << " refusal lines");
  CHECK(written >= 1);
  CHECK(written <= 60);
}

TEST_CASE("200 Register calls naming a socket that never answers do not take 200 threads",
          "[registry][limits]") {
  HostFixture f;
  Host& host = f.StartHost();
  // Listens, never accepts: every dial-back waits for the whole dial timeout.
  const std::string silent = f.plugin_dir() + "/silent.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, silent.c_str(), sizeof(addr.sun_path) - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(fd, 4) == 0);

  auto stub = Client(host);
  const int before = Threads();
  grpc::CompletionQueue cq;
  constexpr int kCalls = 200;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<pb::Empty> responses(kCalls);
  std::vector<grpc::Status> statuses(kCalls);
  pb::RegisterRequest req;
  req.set_version("v1alpha1");
  req.set_resource_name("test.qrm.io/silent");
  req.set_endpoint("silent.sock");
  for (int i = 0; i < kCalls; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    contexts.back()->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    auto call = stub->AsyncRegister(contexts.back().get(), req, &cq);
    call->Finish(&responses[i], &statuses[i], reinterpret_cast<void*>(static_cast<intptr_t>(i)));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // all arrived, none answered
  const int during = Threads();
  INFO("threads before " << before << ", while 200 calls wait " << during);
  CHECK(during - before < 40);

  int exhausted = 0;
  for (int i = 0; i < kCalls; ++i) {
    void* tag = nullptr;
    bool ok = false;
    REQUIRE(cq.Next(&tag, &ok));
    const auto& s = statuses[reinterpret_cast<intptr_t>(tag)];
    exhausted += s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
  }
  cq.Shutdown();
  CHECK(exhausted >= kCalls - 8);  // only a few are checked at once; the rest are told so
  ::close(fd);
}

}  // namespace
}  // namespace qrm::host::testing
