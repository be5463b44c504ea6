// Registration in both styles, refusals, stale sockets and dead plugins, with
// real plugin processes.
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <grpcpp/grpcpp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "qrm/registry/plugin_registry.h"
#include "qrm/registry/registration_validation.h"
#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

namespace pb = ::resourceplugin::v1alpha1;

grpc::Status RegisterDirectly(const std::string& host_socket, const pb::RegisterRequest& req) {
  auto stub = pb::Registration::NewStub(
      grpc::CreateChannel("unix:" + host_socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  pb::Empty resp;
  return stub->Register(&ctx, req, &resp);
}

TEST_CASE("plugins register by RPC and by directory watching", "[registry]") {
  HostFixture f;
  f.StartHost();
  f.StartPlugin("test.qrm.io/rpc");
  f.StartPlugin("test.qrm.io/watched", {"--no-register"});
  REQUIRE(f.WaitRegistered("test.qrm.io/rpc"));
  REQUIRE(f.WaitRegistered("test.qrm.io/watched"));
  CHECK(f.host().registry().Find("test.qrm.io/watched")->style() ==
        registry::RegistrationStyle::kDirectoryWatcher);
  CHECK(f.host().registry().Find("test.qrm.io/rpc")->socket_path() ==
        f.plugin_dir() + "/test.qrm.io_rpc.sock");
}

TEST_CASE("a plugin started before the host is discovered when the host starts", "[registry]") {
  HostFixture f;
  f.StartPlugin("test.qrm.io/early");
  REQUIRE(WaitFor(
      [&] { return ::access((f.plugin_dir() + "/test.qrm.io_early.sock").c_str(), F_OK) == 0; }));
  f.StartHost();
  REQUIRE(f.WaitRegistered("test.qrm.io/early"));
}

TEST_CASE("registrations with a bad version, name or endpoint are refused", "[registry]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/real", {"--no-register"});
  REQUIRE(f.WaitRegistered("test.qrm.io/real"));
  const std::string host_socket = host.registry().registration_socket_path();

  pb::RegisterRequest good;
  good.set_version("v1alpha1");
  good.set_resource_name("test.qrm.io/other");
  good.set_endpoint("test.qrm.io_real.sock");
  CHECK(RegisterDirectly(host_socket, good).ok());

  struct Case {
    std::string version, name, endpoint, reason;
  };
  // A socket outside the plugin directory, reachable through a symlink.
  HostFixture outside;
  outside.StartPlugin("test.qrm.io/outside", {"--no-register"});
  const std::string outside_socket = outside.plugin_dir() + "/test.qrm.io_outside.sock";
  REQUIRE(WaitFor([&] { return ::access(outside_socket.c_str(), F_OK) == 0; }));
  REQUIRE(::symlink(outside_socket.c_str(), (f.plugin_dir() + "/escape.sock").c_str()) == 0);

  const std::vector<Case> cases = {
      {"v1beta1", "test.qrm.io/x", "test.qrm.io_real.sock", "version \"v1beta1\""},
      {"", "test.qrm.io/x", "test.qrm.io_real.sock", "version \"\""},
      {"v1alpha1", "", "test.qrm.io_real.sock", "resource_name \"\""},
      {"v1alpha1", "bad name!", "test.qrm.io_real.sock", "resource_name \"bad name!\""},
      {"v1alpha1", "test.qrm.io/x", "../x", "endpoint \"../x\""},
      {"v1alpha1", "test.qrm.io/x", "..", "endpoint \"..\""},
      {"v1alpha1", "test.qrm.io/x", "/tmp/x.sock", "endpoint \"/tmp/x.sock\""},
      {"v1alpha1", "test.qrm.io/x", "escape.sock", "outside the plugin directory"},
      {"v1alpha1", "test.qrm.io/x", "missing.sock", "does not exist"},
      {"v1alpha1", "test.qrm.io/x", "qrm.sock", "registration socket"},
  };
  for (const auto& c : cases) {
    pb::RegisterRequest req;
    req.set_version(c.version);
    req.set_resource_name(c.name);
    req.set_endpoint(c.endpoint);
    const grpc::Status s = RegisterDirectly(host_socket, req);
    INFO(c.version << " / " << c.name << " / " << c.endpoint << " -> " << s.error_message());
    CHECK_FALSE(s.ok());
    CHECK_THAT(s.error_message(), Catch::Contains(c.reason));
    CHECK(host.registry().Find(c.name) == nullptr);
  }
}

// The host never deletes a plugin's socket: one nobody listens on yet may belong to a plugin
// between bind and listen (deleting it killed that plugin's start).
TEST_CASE("sockets nobody listens on are left alone and not registered", "[registry]") {
  HostFixture f;
  // A socket nobody listens on, as a crashed plugin leaves it.
  const std::string stale = f.plugin_dir() + "/crashed.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, stale.c_str(), sizeof(addr.sun_path) - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  ::close(fd);
  qrm::testing::WriteFile(f.plugin_dir() + "/cpu_plugin_state.json", "{}");
  Host& host = f.StartHost();
  CHECK(::access(stale.c_str(), F_OK) == 0);
  CHECK(::access((f.plugin_dir() + "/cpu_plugin_state.json").c_str(), F_OK) == 0);
  for (const auto& e : host.registry().Endpoints()) CHECK(e->socket_path() != stale);
}

TEST_CASE("a killed plugin becomes a stopped endpoint that fails fast", "[registry]") {
  HostFixture f;
  auto options = f.Options();
  options.registry.grace_period = std::chrono::seconds(1);
  Host& host = f.StartHost(options);
  f.StartPlugin("test.qrm.io/a");
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(host.admission().Admit(Request("p1", "c", {{"test.qrm.io/a", 1}})).ok());
  CHECK(host.AggregateAllocatable().count("test.qrm.io/a") == 1);

  f.plugin("test.qrm.io/a").Kill(SIGKILL);  // no cleanup: its socket stays behind
  auto first = host.admission().Admit(Request("p2", "c", {{"test.qrm.io/a", 1}}));
  REQUIRE_FALSE(first.ok());
  CHECK(first.status().code() == StatusCode::kUnavailable);
  REQUIRE(host.registry().Find("test.qrm.io/a")->stopped());

  const auto start = std::chrono::steady_clock::now();
  auto second = host.admission().Admit(Request("p3", "c", {{"test.qrm.io/a", 1}}));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(second.ok());
  CHECK_THAT(second.status().message(), Catch::Contains("is stopped"));
  CHECK(elapsed < std::chrono::milliseconds(100));

  // Its allocations stay; its capacity counts until the grace period ends.
  CHECK(host.state().GetContainer("p1", "c") != nullptr);
  CHECK(host.registry().EndpointsWithCapacity().size() == 1);
  REQUIRE(WaitFor([&] { return host.registry().EndpointsWithCapacity().empty(); },
                  std::chrono::seconds(3)));
  CHECK(host.AggregateAllocatable().empty());
  CHECK(host.state().GetContainer("p1", "c") != nullptr);
}

TEST_CASE("a restarted plugin replaces its stopped endpoint", "[registry]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/a");
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  f.plugin("test.qrm.io/a").Kill(SIGTERM);  // clean stop removes the socket
  // The plugin registers twice (Register RPC and the directory watcher), and the second
  // replaces the first: the endpoint that stops is whichever is current when the socket goes.
  std::shared_ptr<registry::PluginEndpoint> stopped;
  REQUIRE(WaitFor([&] {
    stopped = host.registry().Find("test.qrm.io/a");
    return stopped != nullptr && stopped->stopped();
  }));
  f.StartPlugin("test.qrm.io/a");
  REQUIRE(WaitFor([&] {
    auto current = host.registry().Find("test.qrm.io/a");
    return current != nullptr && current != stopped && !current->stopped();
  }));
}

TEST_CASE("a plugin whose socket goes while it registers is not published", "[registry]") {
  // The race a restarting plugin can run: it answers the dial-back, then removes its socket
  // and stops before the endpoint is published. The removal event may already be handled,
  // so nothing would ever stop an endpoint published after it.
  HostFixture f;
  f.StartPlugin("test.qrm.io/a", {"--no-register", "--socket", "a.sock"});
  const std::string socket = f.plugin_dir() + "/a.sock";
  REQUIRE(WaitFor([&] { return ::access(socket.c_str(), F_OK) == 0; }));
  boost::asio::io_context io;
  boost::asio::thread_pool workers(2);
  registry::RegistryOptions options = f.Options().registry;
  registry::PluginRegistry registry(options, io, workers);
  bool remove_in_hook = true;
  registry.SetRegistrationHook([&](const std::shared_ptr<registry::PluginEndpoint>&) {
    if (remove_in_hook) ::unlink(socket.c_str());
  });
  pb::RegisterRequest request;
  request.set_version(std::string(registry::kSupportedVersion));
  request.set_resource_name("test.qrm.io/a");
  request.set_endpoint("a.sock");
  const Status refused =
      registry.AcceptRegistration(request, registry::RegistrationStyle::kDirectoryWatcher);
  CHECK(refused.code() == StatusCode::kUnavailable);
  CHECK_THAT(refused.message(), Catch::Contains("was removed while the plugin registered"));
  CHECK(registry.Find("test.qrm.io/a") == nullptr);

  // The plugin back on its socket: registered as usual.
  f.StopPlugin("test.qrm.io/a");
  f.StartPlugin("test.qrm.io/a", {"--no-register", "--socket", "a.sock"});
  REQUIRE(WaitFor([&] { return ::access(socket.c_str(), F_OK) == 0; }));
  remove_in_hook = false;
  REQUIRE(
      registry.AcceptRegistration(request, registry::RegistrationStyle::kDirectoryWatcher).ok());
  CHECK(registry.Find("test.qrm.io/a") != nullptr);
  workers.join();
}

}  // namespace
}  // namespace qrm::host::testing

namespace qrm::host::testing {
namespace {

TEST_CASE("one failing plugin does not blank the aggregated allocatable resources", "[capacity]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/a");
  f.StartPlugin("test.qrm.io/b", {"--fail", "GetTopologyAwareAllocatableResources"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/b"));
  const Allocatable allocatable = host.AggregateAllocatable();
  REQUIRE(allocatable.size() == 1);
  CHECK(allocatable.at("test.qrm.io/a").aggregated_allocatable_quantity() == 8);
  CHECK(f.Calls("test.qrm.io/b", "GetTopologyAwareAllocatableResources") == 1);
}

}  // namespace
}  // namespace qrm::host::testing

namespace qrm::host::testing {
namespace {

TEST_CASE("a plugin answering UNAVAILABLE itself is not a stopped plugin", "[registry]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/busy", {"--fail", "Allocate", "--fail-unavailable"});
  REQUIRE(f.WaitRegistered("test.qrm.io/busy"));
  auto result = host.admission().Admit(Request("p1", "c", {{"test.qrm.io/busy", 1}}));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kUnavailable);
  CHECK_FALSE(host.registry().Find("test.qrm.io/busy")->stopped());
  // The next admission still reaches it.
  REQUIRE_FALSE(host.admission().Admit(Request("p2", "c", {{"test.qrm.io/busy", 1}})).ok());
  CHECK(f.Calls("test.qrm.io/busy", "Allocate") == 2);
}

TEST_CASE("a refusal is the caller's error and not the plugin's last error", "[registry]") {
  // A capacity refusal used to fill qrmctl plugins' LAST-ERROR column (300-character rows)
  // although the plugin was working as it should.
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/full", {"--fail", "Allocate", "--fail-exhausted"});
  f.StartPlugin("test.qrm.io/broken", {"--fail", "Allocate"});
  REQUIRE(f.WaitRegistered("test.qrm.io/full"));
  REQUIRE(f.WaitRegistered("test.qrm.io/broken"));
  auto refused = host.admission().Admit(Request("p1", "c", {{"test.qrm.io/full", 1}}));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK(host.registry().Find("test.qrm.io/full")->last_error().empty());
  REQUIRE_FALSE(host.admission().Admit(Request("p2", "c", {{"test.qrm.io/broken", 1}})).ok());
  CHECK_THAT(host.registry().Find("test.qrm.io/broken")->last_error(),
             Catch::Contains("INTERNAL") && Catch::Contains("failed as configured"));
}

}  // namespace
}  // namespace qrm::host::testing
