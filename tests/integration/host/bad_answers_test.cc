// A misbehaving plugin process (qrm-test-plugin with bad answers): each bad answer fails the
// admission with the plugin, field and value named, the plugin is rolled back, and the host
// checkpoint keeps nothing.
#include <filesystem>

#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

using Catch::Contains;

// A fake sysfs with 2 online CPUs on NUMA nodes 0-1, the fixture's topology.
std::string FakeSysfs(const HostFixture& f) {
  const std::string root = f.File("sysfs");
  std::filesystem::create_directories(root + "/devices/system/cpu");
  std::filesystem::create_directories(root + "/devices/system/node");
  qrm::testing::WriteFile(root + "/devices/system/cpu/online", "0-1\n");
  qrm::testing::WriteFile(root + "/devices/system/node/online", "0-1\n");
  return root;
}

// Admits one container with one bad plugin and checks the refusal and that nothing is kept.
void ExpectRefused(HostFixture& f, Host& host, const std::string& resource,
                   std::vector<std::string> plugin_flags, StatusCode code,
                   const std::vector<std::string>& expected) {
  f.StartPlugin(resource, std::move(plugin_flags));
  REQUIRE(f.WaitRegistered(resource));
  auto result = host.admission().Admit(Request("p1", "c0", {{resource, 1}}));
  INFO(result.status().ToString());
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == code);
  CHECK_THAT(result.status().message(), Contains("resource plugin " + resource));
  for (const auto& text : expected) CHECK_THAT(result.status().message(), Contains(text));
  // The plugin allocated, was told to release the pod, and the host stored nothing.
  CHECK(f.Calls(resource, "Allocate") == 1);
  CHECK(f.Calls(resource, "RemovePod") == 1);
  CHECK(host.state().GetPod("p1") == nullptr);
  CHECK(host.state().Snapshot().empty());
}

TEST_CASE("a NaN allocated_quantity fails the admission and is not stored", "[bad-input]") {
  HostFixture f;
  Host& host = f.StartHost();
  ExpectRefused(f, host, "test.qrm.io/nan", {"--quantity", "nan"}, StatusCode::kInvalidArgument,
                {"Allocate", "allocated_quantity nan"});
}

TEST_CASE("a cpuset outside the machine fails the admission", "[bad-input]") {
  HostFixture f;
  auto options = f.Options();
  options.registry.machine_sysfs_root = FakeSysfs(f);
  Host& host = f.StartHost(options);
  SECTION("absurd CPU ids") {
    ExpectRefused(f, host, "test.qrm.io/cpus",
                  {"--oci-property", "CpusetCpus", "--result", "0-9999"},
                  StatusCode::kInvalidArgument, {"CpusetCpus value \"0-9999\""});
  }
  SECTION("CPUs this machine does not have") {
    ExpectRefused(f, host, "test.qrm.io/cpus", {"--oci-property", "CpusetCpus", "--result", "0-3"},
                  StatusCode::kInvalidArgument,
                  {"CpusetCpus value \"0-3\"", "CPUs 2-3 are not online"});
  }
  SECTION("NUMA nodes this machine does not have") {
    ExpectRefused(f, host, "test.qrm.io/mems", {"--oci-property", "CpusetMems", "--result", "0-5"},
                  StatusCode::kInvalidArgument, {"CpusetMems value \"0-5\""});
  }
}

TEST_CASE("an unknown oci_property_name fails the admission", "[bad-input]") {
  HostFixture f;
  Host& host = f.StartHost();
  ExpectRefused(f, host, "test.qrm.io/bogus", {"--oci-property", "CpuSetCpus"},
                StatusCode::kInvalidArgument, {"unknown oci_property_name \"CpuSetCpus\""});
}

TEST_CASE("an answer over the message size limit fails with the limit named", "[bad-input]") {
  HostFixture f;
  auto options = f.Options();
  options.registry.max_message_bytes = 4096;
  Host& host = f.StartHost(options);
  // Free text (no oci property), so only its size is wrong.
  ExpectRefused(f, host, "test.qrm.io/big",
                {"--oci-property", "", "--result", std::string(8000, 'x')},
                StatusCode::kResourceExhausted, {"4096"});
}

TEST_CASE("hints naming NUMA nodes the machine lacks are refused before any allocation",
          "[bad-input]") {
  HostFixture f;
  Host& host = f.StartHost();  // nodes 0-1
  f.StartPlugin("test.qrm.io/far", {"--hints", "{5}:p"});
  REQUIRE(f.WaitRegistered("test.qrm.io/far"));
  auto result = host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/far", 1}}));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(result.status().message(), Contains("test.qrm.io/far"));
  CHECK_THAT(result.status().message(), Contains("NUMA node"));
  CHECK_THAT(result.status().message(), Contains("5"));
  CHECK(f.Calls("test.qrm.io/far", "Allocate") == 0);
  CHECK(host.state().Snapshot().empty());
}

TEST_CASE("a second live plugin claiming a registered resource is refused", "[bad-input]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/dup");
  REQUIRE(f.WaitRegistered("test.qrm.io/dup"));
  const std::string first = host.registry().Find("test.qrm.io/dup")->socket_path();
  // Another process serving the same resource on its own socket.
  ChildProcess second({QRM_TEST_PLUGIN, "--resource", "test.qrm.io/dup", "--plugin-dir",
                       f.plugin_dir(), "--socket", "impostor.sock"},
                      f.File("impostor.log"));
  REQUIRE(WaitFor([&] {
    return qrm::testing::ReadFile(f.File("impostor.log")).find("already registered") !=
           std::string::npos;
  }));
  CHECK(host.registry().Find("test.qrm.io/dup")->socket_path() == first);
}

}  // namespace
}  // namespace qrm::host::testing
