// The refusal policy: an intercepted request the shim cannot decode never reaches the
// runtime unadmitted. It is refused with INVALID_ARGUMENT naming the method and what does not
// decode, and counted, unless what can be read of it shows a skipped pod.
#include <catch2/catch.hpp>

#include "cri-shim/refusals.h"
#include "tests/integration/cri_shim/shim_fixture.h"

namespace qrm::shim::testing {
namespace {

using Catch::Matchers::Contains;

const std::string kCreate = "/runtime.v1.RuntimeService/CreateContainer";
// Field 1 (a string) of 3 bytes that are not UTF-8, then garbage: no CRI message parses it.
const std::string kGarbage("\x0a\x03\xff\xfe\xfd\xff\xff\xff", 8);

TEST_CASE("An env value that is not UTF-8 decodes and is admitted", "[cri_shim][refusal]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  f.Open();
  const auto pod = f.PodConfig("uid-b", "bin", "default");
  const std::string sandbox = f.RunPod(pod);
  auto request = f.ContainerRequest(sandbox, pod, "app");
  const std::string binary("\xff\x00\xfe binary", 9);
  auto* env = request.mutable_config()->add_envs();
  env->set_key("BLOB");
  env->set_value(binary);
  std::string id;
  const grpc::Status s = f.CreateContainer(request, &id);
  INFO(s.error_message());
  REQUIRE(s.ok());
  const auto sent = f.runtime().Requests<cri::CreateContainerRequest>("/CreateContainer");
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].config().linux().resources().cpuset_cpus() == "2-3");
  bool found = false;
  for (const auto& e : sent[0].config().envs()) found |= e.key() == "BLOB" && e.value() == binary;
  CHECK(found);
  CHECK(f.host().state().GetContainer("uid-b", "app") != nullptr);
}

TEST_CASE("Undecodable intercepted requests are refused and never forwarded",
          "[cri_shim][refusal]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  f.Open();
  const auto pod = f.PodConfig("uid-c", "web", "default");
  const std::string sandbox = f.RunPod(pod);

  SECTION("garbage bytes, each intercepted method") {
    for (const char* method :
         {"RunPodSandbox", "CreateContainer", "StartContainer", "UpdateContainerResources"}) {
      INFO(method);
      const double before = RefusedCount(method, RefusalReason::kUndecodable);
      const RawResult r = f.RawCall(std::string("/runtime.v1.RuntimeService/") + method, kGarbage);
      CHECK(r.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
      CHECK_THAT(r.status.error_message(),
                 Contains(std::string(method) + " request cannot be decoded"));
      CHECK(f.runtime().Calls(std::string("/") + method).size() ==
            (method == std::string("RunPodSandbox") ? 1u : 0u));
      CHECK(RefusedCount(method, RefusalReason::kUndecodable) == before + 1);
    }
  }
  SECTION("a string field that is not UTF-8 is named, with the pod in the refusal") {
    auto request = f.ContainerRequest(sandbox, pod, "app");
    request.mutable_config()->set_working_dir("ok");
    std::string bytes = request.SerializeAsString();
    // working_dir "ok" -> two bytes that are not UTF-8, same length.
    const size_t at = bytes.find("ok");
    REQUIRE(at != std::string::npos);
    bytes[at] = '\xff';
    bytes[at + 1] = '\xfe';
    const RawResult r = f.RawCall(kCreate, bytes);
    CHECK(r.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(r.status.error_message(),
               Contains("CreateContainer request cannot be decoded") &&
                   Contains("config.working_dir: string is not valid UTF-8"));
    CHECK(f.runtime().Calls("/CreateContainer").empty());
    CHECK(f.host().state().GetContainer("uid-c", "app") == nullptr);
    CHECK(f.PluginCalls("cpu", "Allocate") == 0);
  }
}

TEST_CASE("An undecodable request of a skipped pod passes through untouched",
          "[cri_shim][refusal][skip]") {
  ShimFixture f;
  ShimOptions options = f.Options();
  options.skip_namespaces = {"kube-system"};
  f.StartHost(options, f.HostOptions());
  f.Open();
  const auto pod = f.PodConfig("uid-s", "dns", "kube-system");
  const std::string sandbox = f.RunPod(pod);
  auto request = f.ContainerRequest(sandbox, pod, "app");
  request.mutable_config()->set_working_dir("ok");
  std::string bytes = request.SerializeAsString();
  bytes[bytes.find("ok")] = '\xff';
  const RawResult r = f.RawCall(kCreate, bytes);
  INFO(r.status.error_message());
  CHECK(r.status.ok());
  REQUIRE(f.runtime().Calls("/CreateContainer").size() == 1);
  CHECK(f.runtime().Calls("/CreateContainer")[0].request == bytes);
}

}  // namespace
}  // namespace qrm::shim::testing
