// Registration as the kubewharf kubelet does it, with real plugin processes: a Register RPC's
// own options win, resource names follow Kubernetes' container resource rules, and a plugin
// refused during directory watching gets exactly one warning naming its socket and the reason.
#include <thread>

#include <grpcpp/grpcpp.h>

#include "api/resourceplugin_v1alpha1.grpc.pb.h"
#include "qrm/registry/registration_validation.h"
#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

namespace pb = ::resourceplugin::v1alpha1;

grpc::Status Register(const std::string& host_socket, const pb::RegisterRequest& req) {
  auto stub = pb::Registration::NewStub(
      grpc::CreateChannel("unix:" + host_socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  pb::Empty resp;
  return stub->Register(&ctx, req, &resp);
}

TEST_CASE(
    "a Register RPC's own options win over GetResourcePluginOptions, and the difference "
    "is logged",
    "[registry][kubewharf]") {
  LogCapture log("registry");
  HostFixture f;
  Host& host = f.StartHost();
  // Serves need_reconcile=false; discovered by directory watching first.
  f.StartPlugin("test.qrm.io/opts", {"--no-register"});
  REQUIRE(f.WaitRegistered("test.qrm.io/opts"));
  CHECK_FALSE(host.registry().Find("test.qrm.io/opts")->options().need_reconcile());

  pb::RegisterRequest req;
  req.set_version("v1alpha1");
  req.set_resource_name("test.qrm.io/opts");
  req.set_endpoint("test.qrm.io_opts.sock");
  req.mutable_options()->set_need_reconcile(true);
  req.mutable_options()->set_with_topology_alignment(true);
  const grpc::Status s = Register(host.registry().registration_socket_path(), req);
  INFO(s.error_message());
  REQUIRE(s.ok());
  auto endpoint = host.registry().Find("test.qrm.io/opts");
  CHECK(endpoint->style() == registry::RegistrationStyle::kRegisterRpc);
  CHECK(endpoint->options().need_reconcile());
  CHECK(log.At(spdlog::level::warn, "differ from GetResourcePluginOptions").size() == 1);

  // Without options in the request, the dial-back answer stands (and nothing is logged).
  req.clear_options();
  REQUIRE(Register(host.registry().registration_socket_path(), req).ok());
  CHECK_FALSE(host.registry().Find("test.qrm.io/opts")->options().need_reconcile());
  CHECK(log.At(spdlog::level::warn, "differ from GetResourcePluginOptions").size() == 1);
}

// A DNS subdomain of 246 characters: valid on its own, too long behind "requests.".
std::string LongPrefix() {
  const std::string label(60, 'a');
  return label + "." + label + "." + label + "." + label + ".io";
}

TEST_CASE("resource names follow Kubernetes' container resource name rules",
          "[registry][kubewharf]") {
  for (const char* ok : {"cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "example.com/foo",
                         "qrm.io/nic", "kubernetes.io/batch-cpu", "a.b/c_d.e-f"}) {
    INFO(ok);
    CHECK(registry::ValidateResourceName(ok).ok());
  }
  struct Bad {
    std::string name, reason;
  };
  for (const Bad& bad : std::vector<Bad>{{"slots", "needs a domain prefix"},
                                         {"gpu", "needs a domain prefix"},
                                         {"requests.example.com/foo", "\"requests.\""},
                                         {"Example.com/foo", "DNS subdomain"},
                                         {"example.com/", "DNS subdomain"},
                                         {LongPrefix() + "/x", "244"}}) {
    INFO(bad.name);
    const Status s = registry::ValidateResourceName(bad.name);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains(bad.reason));
  }

  // End to end: an unprefixed extended resource cannot register.
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/real", {"--no-register"});
  REQUIRE(f.WaitRegistered("test.qrm.io/real"));
  pb::RegisterRequest req;
  req.set_version("v1alpha1");
  req.set_resource_name("slots");
  req.set_endpoint("test.qrm.io_real.sock");
  const grpc::Status s = Register(host.registry().registration_socket_path(), req);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(s.error_message(), Catch::Contains("resource_name \"slots\""));
  CHECK(host.registry().Find("slots") == nullptr);
}

TEST_CASE("a plugin refused during directory watching gets one warning naming socket and reason",
          "[registry][kubewharf]") {
  LogCapture log("registry");
  HostFixture f;
  Host& host = f.StartHost();
  // Watcher-style only, under a name Kubernetes refuses (no domain prefix).
  f.StartPlugin("slots", {"--no-register"});
  const std::string socket = f.plugin_dir() + "/slots.sock";
  REQUIRE(WaitFor([&] { return !log.At(spdlog::level::warn, socket).empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // nothing else follows
  const auto warnings = log.At(spdlog::level::warn, socket);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::Contains("needs a domain prefix"));
  CHECK(log.At(spdlog::level::err, "slots").empty());
  CHECK(host.registry().Find("slots") == nullptr);
}

}  // namespace
}  // namespace qrm::host::testing
