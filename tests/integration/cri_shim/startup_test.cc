// Start-up: option checks, the runtime connection, resync before serving, and the CRI
// socket (stale socket, permissions, refusing to take over a live one).
#include <filesystem>

#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cri-shim/socket_file.h"
#include "testing/temp_dir.h"
#include "tests/integration/cri_shim/shim_fixture.h"

namespace qrm::shim::testing {
namespace {

using Catch::Matchers::Contains;

admission::ContainerRequest Request(const std::string& uid, const std::string& container) {
  admission::ContainerRequest r;
  r.pod_uid = uid;
  r.pod_name = "pod-" + uid;
  r.pod_namespace = "default";
  r.container_name = container;
  r.resources = {{"cpu", 1.0}};
  r.annotations["katalyst.kubewharf.io/qos_level"] = "dedicated_cores";
  return r;
}

// A socket file nobody listens on, as a crashed process leaves it.
void MakeStaleSocket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  ::close(fd);
}

bool VersionWorks(ShimFixture& f) {
  cri::VersionResponse response;
  return f.Runtime().Version(f.Context().get(), cri::VersionRequest(), &response).ok() &&
         response.runtime_name() == "fake";
}

TEST_CASE("Options are checked up front, naming the option and the value", "[cri_shim][startup]") {
  ShimFixture f;
  host::Host host(f.HostOptions());  // never started: Create must not need it
  struct Case {
    std::function<void(ShimOptions&)> edit;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {[](auto& o) { o.runtime_endpoint = "tcp://10.0.0.1:1234"; },
       {"runtime_endpoint", "tcp://10.0.0.1:1234"}},
      {[](auto& o) { o.image_endpoint = "images.sock"; }, {"image_endpoint", "images.sock"}},
      {[](auto& o) { o.cri_socket = ""; }, {"cri_socket", "\"\""}},
      {[&](auto& o) { o.cri_socket = o.runtime_endpoint; }, {"cri_socket", "runtime's own"}},
      {[](auto& o) { o.max_message_bytes = 0; }, {"max_message_bytes 0"}},
      {[](auto& o) { o.socket_mode = 010777; }, {"socket_mode 10777"}},
      {[](auto& o) { o.socket_group = "no-such-group-qrm"; },
       {"socket_group", "no-such-group-qrm", "no such group"}},
      {[](auto& o) { o.admission_threads = 0; }, {"admission_threads 0"}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    ShimOptions options = f.Options();
    cases[i].edit(options);
    auto shim = CriShim::Create(options, host);
    INFO("case " << i << ": " << (shim.ok() ? "ok" : shim.status().message()));
    REQUIRE_FALSE(shim.ok());
    CHECK(shim.status().code() == StatusCode::kInvalidArgument);
    for (const auto& text : cases[i].expected) CHECK_THAT(shim.status().message(), Contains(text));
  }
  ShimOptions good = f.Options();
  good.socket_group = "0";
  good.image_endpoint = "unix://" + f.runtime().socket_path();
  CHECK(CriShim::Create(good, host).ok());
}

TEST_CASE("Nothing works before the runtime is connected and resynchronized",
          "[cri_shim][startup]") {
  ShimFixture f;
  ShimOptions options = f.Options();
  options.runtime_endpoint = f.File("nobody-here.sock");
  options.runtime_timeout = std::chrono::milliseconds(300);
  f.StartHost(options, f.HostOptions());
  const Status connect = f.shim().ConnectRuntime();
  CHECK(connect.code() == StatusCode::kUnavailable);
  CHECK_THAT(connect.message(), Contains("nobody-here.sock"));
  CHECK(f.shim().Resync().status().code() == StatusCode::kFailedPrecondition);
  CHECK(f.shim().Serve().code() == StatusCode::kFailedPrecondition);
  CHECK(f.shim().applier().Apply("uid", "c", apply::ContainerUpdate()).code() ==
        StatusCode::kUnavailable);
  CHECK(f.shim().view().ListPodUids().status().code() == StatusCode::kUnavailable);
  CHECK(f.shim().counters().applier_failures == 1);
  CHECK_FALSE(std::filesystem::exists(f.cri_socket()));
}

TEST_CASE("Resync drops checkpointed containers and pods the runtime no longer has",
          "[cri_shim][startup]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  // The checkpoint as a previous qrm-host left it.
  for (const auto& [uid, container] : std::vector<std::pair<std::string, std::string>>{
           {"uid-r1", "kept"}, {"uid-r1", "gone"}, {"uid-r2", "app"}}) {
    auto admitted = f.host().admission().Admit(Request(uid, container));
    INFO(admitted.status().ToString());
    REQUIRE(admitted.ok());
  }
  // What the runtime has now: uid-r1 with only "kept"; uid-r2 gone; a pod qrm never saw.
  const std::string sandbox = f.runtime().AddSandbox("uid-r1", "pod-uid-r1", "default");
  const std::string kept_id = f.runtime().AddContainer(sandbox, "kept");
  const std::string other = f.runtime().AddSandbox("uid-other", "other", "default");
  f.runtime().AddContainer(other, "x");

  const ResyncStats stats = f.Open();
  CHECK(stats.sandboxes == 2);
  CHECK(stats.containers == 2);
  CHECK(stats.pods_released == 1);
  CHECK(stats.containers_released == 1);
  CHECK(stats.kept == 1);
  CHECK(stats.failures == 0);
  CHECK(f.host().state().GetContainer("uid-r1", "kept"));
  CHECK_FALSE(f.host().state().GetContainer("uid-r1", "gone"));
  CHECK_FALSE(f.host().state().GetPod("uid-r2"));
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-r2") == 1);
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-r1") == 0);

  // The id maps are rebuilt: reconcile updates reach the listed container.
  auto update = f.host().admission().CurrentUpdate("uid-r1", "kept");
  REQUIRE(update.ok());
  REQUIRE(f.shim().applier().Apply("uid-r1", "kept", *update).ok());
  const auto sent =
      f.runtime().Requests<cri::UpdateContainerResourcesRequest>("/UpdateContainerResources");
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].container_id() == kept_id);
  CHECK(sent[0].linux().cpuset_cpus() == "2-3");  // StartCpuPlugin's answer
  // ... and a container removal releases it.
  cri::RemoveContainerRequest remove;
  remove.set_container_id(kept_id);
  cri::RemoveContainerResponse removed;
  REQUIRE(f.Runtime().RemoveContainer(f.Context().get(), remove, &removed).ok());
  CHECK_FALSE(f.host().state().GetContainer("uid-r1", "kept"));
}

TEST_CASE("The CRI socket replaces a stale one and takes the runtime socket's permissions",
          "[cri_shim][startup][socket]") {
  ShimFixture f;
  REQUIRE(::chown(f.runtime().socket_path().c_str(), 0, 4321) == 0);
  REQUIRE(::chmod(f.runtime().socket_path().c_str(), 0660) == 0);
  MakeStaleSocket(f.cri_socket());
  f.StartAll();
  struct stat st {};
  REQUIRE(::stat(f.cri_socket().c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  CHECK((st.st_mode & 07777) == 0660);
  CHECK(st.st_uid == 0);
  CHECK(st.st_gid == 4321);
  CHECK(VersionWorks(f));

  SECTION("a second qrm-host does not take over a live socket") {
    const Status live = PrepareSocketPath(f.cri_socket());
    CHECK(live.code() == StatusCode::kFailedPrecondition);
    CHECK_THAT(live.message(), Contains(f.cri_socket()) && Contains("another process"));
    CHECK(VersionWorks(f));
  }
  SECTION("Stop removes the socket") {
    f.shim().Stop();
    CHECK_FALSE(std::filesystem::exists(f.cri_socket()));
  }
}

TEST_CASE("Socket preparation refuses live sockets and other files", "[cri_shim][socket]") {
  qrm::testing::TempDir dir;
  const std::string regular = dir.File("file.sock");
  qrm::testing::WriteFile(regular, "not a socket");
  const Status file = PrepareSocketPath(regular);
  CHECK(file.code() == StatusCode::kAlreadyExists);
  CHECK_THAT(file.message(), Contains(regular));
  CHECK(qrm::testing::ReadFile(regular) == "not a socket");
  // A missing directory is created; a path there is then free.
  CHECK(PrepareSocketPath(dir.File("sub/dir/cri.sock")).ok());
  CHECK(std::filesystem::is_directory(dir.File("sub/dir")));
}

TEST_CASE("Configured socket mode and group win over the runtime's",
          "[cri_shim][startup][socket]") {
  ShimFixture f;
  REQUIRE(::chmod(f.runtime().socket_path().c_str(), 0666) == 0);
  ShimOptions options = f.Options();
  options.socket_mode = 0600;
  options.socket_group = "4242";
  f.StartAll(options);
  struct stat st {};
  REQUIRE(::stat(f.cri_socket().c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(st.st_gid == 4242);
  CHECK(VersionWorks(f));
}

}  // namespace
}  // namespace qrm::shim::testing
