// The intercepted CRI calls against a real qrm Host and real plugins: admission into
// CreateContainer, rollback, PreStartContainer, releases, skip rules, the kubelet's updates
// and the reconcile loop's.
#include <fstream>
#include <future>
#include <thread>

#include <catch2/catch.hpp>
#include <google/protobuf/unknown_field_set.h>

#include "tests/integration/cri_shim/device_plugin.h"
#include "tests/integration/cri_shim/shim_fixture.h"

namespace qrm::shim::testing {
namespace {

using Catch::Matchers::Contains;

std::map<std::string, std::string> Envs(const cri::ContainerConfig& config) {
  std::map<std::string, std::string> out;
  for (const auto& e : config.envs()) out[e.key()] = e.value();
  return out;
}

grpc::Status Call(ShimFixture& f, const std::string& method, const std::string& id) {
  // StartContainer, RemoveContainer, StopPodSandbox and RemovePodSandbox all carry only the
  // id, as field 1.
  cri::StartContainerRequest request;
  request.set_container_id(id);
  const RawResult r =
      f.RawCall("/runtime.v1.RuntimeService/" + method, request.SerializeAsString());
  return r.status;
}

std::shared_ptr<const state::ContainerAllocation> Stored(ShimFixture& f, const std::string& uid,
                                                         const std::string& container) {
  return f.host().state().GetContainer(uid, container);
}

TEST_CASE(
    "CreateContainer carries qrm's cgroup fields, envs and annotations, the rest is the "
    "kubelet's",
    "[cri_shim][create]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  DevicePlugin device;
  sdk::PluginServerOptions device_options;
  device_options.plugin_dir = f.plugin_dir();
  sdk::PluginServer device_server(device, device_options);
  REQUIRE(device_server.Start().ok());
  REQUIRE(f.WaitRegistered(DevicePlugin::kResource));
  f.Open();

  const auto pod = f.PodConfig("uid-a", "web", "default",
                               {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
                                {"qrm.io/resources", R"({"example.com/dev": 1})"}});
  const std::string sandbox = f.RunPod(pod);
  auto request = f.ContainerRequest(sandbox, pod, "app", 2048);
  // A field of a newer CRI than ours, which must reach the runtime.
  request.mutable_config()
      ->GetReflection()
      ->MutableUnknownFields(request.mutable_config())
      ->AddLengthDelimited(300, "from-the-future");
  std::string id;
  const grpc::Status s = f.CreateContainer(request, &id);
  INFO(s.error_message());
  REQUIRE(s.ok());
  CHECK(id.rfind("ctr-", 0) == 0);

  const auto sent = f.runtime().Requests<cri::CreateContainerRequest>("/CreateContainer");
  REQUIRE(sent.size() == 1);
  const auto& resources = sent[0].config().linux().resources();
  CHECK(resources.cpuset_cpus() == "2-3");
  CHECK(resources.cpu_shares() == 2048);
  CHECK(resources.memory_limit_in_bytes() == 256ll << 20);
  CHECK(sent[0].config().envs(0).key() == "PATH");  // the kubelet's first, in its order
  CHECK(Envs(sent[0].config()) == std::map<std::string, std::string>{{"PATH", "/bin"},
                                                                     {"DEV", "dev0"},
                                                                     {"TEST_PLUGIN_NODES", "0"}});
  CHECK(sent[0].config().annotations().at("example.com/dev") == "dev0");
  const auto& unknown = sent[0].config().GetReflection()->GetUnknownFields(sent[0].config());
  REQUIRE(unknown.field_count() == 1);
  CHECK(unknown.field(0).number() == 300);
  CHECK(unknown.field(0).length_delimited() == "from-the-future");

  // The checkpoint holds what was admitted: 2048 shares are 2 cores.
  auto stored = Stored(f, "uid-a", "app");
  REQUIRE(stored);
  CHECK(stored->request.resource_requests().at("cpu") == 2.0);
  CHECK(stored->request.resource_requests().at("example.com/dev") == 1.0);
  CHECK(stored->resources.count("cpu") == 1);
  CHECK(stored->resources.count("example.com/dev") == 1);
  CHECK(f.PluginCalls("cpu", "Allocate", "uid-a") == 1);
  CHECK(f.shim().counters().intercepted_calls >= 2);  // RunPodSandbox, CreateContainer

  SECTION("StartContainer asks the plugins that want PreStartContainer first") {
    REQUIRE(Call(f, "StartContainer", id).ok());
    const auto pre_starts = device.pre_starts();
    REQUIRE(pre_starts.size() == 1);
    CHECK(pre_starts[0].pod_uid() == "uid-a");
    CHECK(pre_starts[0].pod_name() == "web");
    CHECK(pre_starts[0].pod_namespace() == "default");
    CHECK(pre_starts[0].container_name() == "app");
    CHECK(f.runtime().Calls("/StartContainer").size() == 1);
  }
  SECTION("A failing PreStartContainer fails the start before the runtime sees it") {
    device.set_fail_pre_start(true);
    const grpc::Status start = Call(f, "StartContainer", id);
    CHECK(start.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
    CHECK_THAT(start.error_message(), Contains("device dev0 is not ready") &&
                                          Contains("example.com/dev") && Contains("container=app"));
    CHECK(f.runtime().Calls("/StartContainer").empty());
  }
  device_server.Stop();
}

TEST_CASE("A runtime failure rolls the admission back and restores the pod's other containers",
          "[cri_shim][create]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  f.Open();
  const auto pod = f.PodConfig("uid-b", "db");
  const std::string sandbox = f.RunPod(pod);
  REQUIRE(f.CreateContainer(f.ContainerRequest(sandbox, pod, "first"), nullptr).ok());

  f.runtime().FailWith("/CreateContainer",
                       grpc::Status(grpc::StatusCode::INTERNAL, "no space left on device"));
  const grpc::Status s = f.CreateContainer(f.ContainerRequest(sandbox, pod, "second"), nullptr);
  CHECK(s.error_code() == grpc::StatusCode::INTERNAL);
  CHECK(s.error_message() == "no space left on device");  // the runtime's, unchanged
  CHECK_FALSE(Stored(f, "uid-b", "second"));
  CHECK(Stored(f, "uid-b", "first"));
  // Allocate first, Allocate second, RemovePod (the only release), Allocate first again.
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-b") == 1);
  CHECK(f.PluginCalls("cpu", "Allocate", "uid-b") == 3);
  CHECK(f.shim().counters().rollbacks == 1);

  f.runtime().ClearFailures();
  REQUIRE(f.CreateContainer(f.ContainerRequest(sandbox, pod, "second"), nullptr).ok());
  CHECK(Stored(f, "uid-b", "second"));
  CHECK(f.PluginCalls("cpu", "Allocate", "uid-b") == 4);
}

TEST_CASE("Admission refusals reach the kubelet as errors, and the runtime never sees the call",
          "[cri_shim][create]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin({"--fail", "Allocate"});
  f.Open();
  const auto pod = f.PodConfig("uid-c", "web");
  const std::string sandbox = f.RunPod(pod);
  const grpc::Status refused = f.CreateContainer(f.ContainerRequest(sandbox, pod, "app"), nullptr);
  CHECK(refused.error_code() == grpc::StatusCode::INTERNAL);  // the plugin's code
  CHECK_THAT(refused.error_message(),
             Contains("qrm admission of pod=default/web(uid-c) container=app") &&
                 Contains("Allocate failed as configured"));
  CHECK(f.shim().counters().admission_failures == 1);

  auto bad = f.ContainerRequest(sandbox, pod, "app");
  (*bad.mutable_sandbox_config()->mutable_annotations())["qrm.io/cpu-request"] = "lots";
  const grpc::Status invalid = f.CreateContainer(bad, nullptr);
  CHECK(invalid.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(invalid.error_message(), Contains("qrm.io/cpu-request=\"lots\""));

  auto typo = f.ContainerRequest(sandbox, pod, "app");
  (*typo.mutable_sandbox_config()->mutable_annotations())["qrm.io/skip"] = "maybe";
  const grpc::Status skip = f.CreateContainer(typo, nullptr);
  CHECK(skip.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(skip.error_message(), Contains("qrm.io/skip=\"maybe\""));

  CHECK(f.runtime().Calls("/CreateContainer").empty());
}

TEST_CASE(
    "RemoveContainer releases a container once the runtime confirms, but a restarted "
    "container keeps its allocation",
    "[cri_shim][release]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  f.Open();
  const auto pod = f.PodConfig("uid-d", "web");
  const std::string sandbox = f.RunPod(pod);
  std::string first, second;
  REQUIRE(f.CreateContainer(f.ContainerRequest(sandbox, pod, "app"), &first).ok());
  // The kubelet restarts "app": a new container of the same name, re-admitted from the
  // checkpoint, then garbage-collects the dead one.
  REQUIRE(f.CreateContainer(f.ContainerRequest(sandbox, pod, "app"), &second).ok());
  CHECK(f.PluginCalls("cpu", "Allocate", "uid-d") == 1);
  const auto creates = f.runtime().Requests<cri::CreateContainerRequest>("/CreateContainer");
  REQUIRE(creates.size() == 2);
  CHECK(creates[1].config().linux().resources().cpuset_cpus() == "2-3");

  f.runtime().FailWith("/RemoveContainer",
                       grpc::Status(grpc::StatusCode::UNAVAILABLE, "runtime busy"));
  CHECK(Call(f, "RemoveContainer", first).error_code() == grpc::StatusCode::UNAVAILABLE);
  f.runtime().ClearFailures();
  REQUIRE(Call(f, "RemoveContainer", first).ok());
  CHECK(Stored(f, "uid-d", "app"));  // the restarted container still runs with it
  REQUIRE(Call(f, "RemoveContainer", second).ok());
  CHECK_FALSE(Stored(f, "uid-d", "app"));
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-d") == 0);  // the pod lives on
  CHECK(f.shim().counters().releases == 1);
}

TEST_CASE(
    "Stopping a pod's sandbox releases the pod, removing an old sandbox of a pod with a "
    "new one does not",
    "[cri_shim][release]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  f.Open();
  const auto pod = f.PodConfig("uid-e", "web");
  const std::string old_sandbox = f.RunPod(pod);
  REQUIRE(f.CreateContainer(f.ContainerRequest(old_sandbox, pod, "app"), nullptr).ok());
  REQUIRE(Call(f, "StopPodSandbox", old_sandbox).ok());
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-e") == 1);
  CHECK_FALSE(f.host().state().GetPod("uid-e"));

  // The kubelet recreates the pod's sandbox and containers, then collects the old sandbox.
  const std::string new_sandbox = f.RunPod(pod);
  REQUIRE(f.CreateContainer(f.ContainerRequest(new_sandbox, pod, "app"), nullptr).ok());
  CHECK(f.PluginCalls("cpu", "Allocate", "uid-e") == 2);
  REQUIRE(Call(f, "RemovePodSandbox", old_sandbox).ok());
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-e") == 1);
  CHECK(Stored(f, "uid-e", "app"));

  // Removed without a stop (qrm did not see it): released then.
  REQUIRE(Call(f, "RemovePodSandbox", new_sandbox).ok());
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-e") == 2);
  CHECK_FALSE(f.host().state().GetPod("uid-e"));
}

TEST_CASE("Skipped pods pass through byte for byte", "[cri_shim][skip]") {
  ShimFixture f;
  ShimOptions options = f.Options();
  options.skip_namespaces = {"kube-system"};
  f.StartHost(options, f.HostOptions());
  f.StartCpuPlugin();
  f.Open();
  const auto system_pod = f.PodConfig("uid-s1", "dns", "kube-system");
  const auto opted_out = f.PodConfig(
      "uid-s2", "batch", "default",
      {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"}, {"qrm.io/skip", "true"}});
  for (const auto* pod : {&system_pod, &opted_out}) {
    const std::string sandbox = f.RunPod(*pod);
    const std::string bytes = f.ContainerRequest(sandbox, *pod, "app").SerializeAsString();
    const RawResult r = f.RawCall("/runtime.v1.RuntimeService/CreateContainer", bytes);
    REQUIRE(r.status.ok());
    CHECK(f.runtime().Calls("/CreateContainer").back().request == bytes);
    cri::CreateContainerResponse created;
    REQUIRE(created.ParseFromString(r.response));
    REQUIRE(Call(f, "StartContainer", created.container_id()).ok());
  }
  CHECK(f.PluginCalls("cpu", "GetTopologyHints") == 0);
  CHECK(f.PluginCalls("cpu", "Allocate") == 0);
  CHECK(f.host().state().Snapshot().empty());
  CHECK(f.runtime().Calls("/StartContainer").size() == 2);
}

TEST_CASE("The kubelet's UpdateContainerResources gets qrm's owned fields re-applied",
          "[cri_shim][update]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  f.Open();
  const auto pod = f.PodConfig("uid-u", "web");
  const std::string sandbox = f.RunPod(pod);
  std::string id;
  REQUIRE(f.CreateContainer(f.ContainerRequest(sandbox, pod, "app"), &id).ok());

  cri::UpdateContainerResourcesRequest update;
  update.set_container_id(id);
  update.mutable_linux()->set_cpuset_cpus("0-7");  // the kubelet's own cpuset
  update.mutable_linux()->set_cpu_shares(4096);
  update.mutable_linux()->set_memory_limit_in_bytes(1ll << 30);
  cri::UpdateContainerResourcesResponse response;
  REQUIRE(f.Runtime().UpdateContainerResources(f.Context().get(), update, &response).ok());
  const auto sent =
      f.runtime().Requests<cri::UpdateContainerResourcesRequest>("/UpdateContainerResources");
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].container_id() == id);
  CHECK(sent[0].linux().cpuset_cpus() == "2-3");
  CHECK(sent[0].linux().cpu_shares() == 4096);
  CHECK(sent[0].linux().memory_limit_in_bytes() == 1ll << 30);

  // A container qrm does not know: untouched, and the runtime's answer comes back.
  update.set_container_id("unknown");
  const std::string bytes = update.SerializeAsString();
  const RawResult r = f.RawCall("/runtime.v1.RuntimeService/UpdateContainerResources", bytes);
  CHECK(r.status.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(f.runtime().Calls("/UpdateContainerResources").back().request == bytes);
}

TEST_CASE("Reconcile changes reach the runtime through the applier and failures are retried",
          "[cri_shim][applier]") {
  ShimFixture f;
  f.StartHost();
  const std::string result_file = f.File("cpu-result");
  f.StartCpuPlugin({"--need-reconcile", "--result-file", result_file});
  f.Open();
  const auto pod = f.PodConfig("uid-r", "web");
  const std::string sandbox = f.RunPod(pod);
  std::string id;
  REQUIRE(f.CreateContainer(f.ContainerRequest(sandbox, pod, "app"), &id).ok());

  std::ofstream(result_file) << "6-7\n";
  auto tick = f.host().reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->containers_applied == 1);
  auto sent =
      f.runtime().Requests<cri::UpdateContainerResourcesRequest>("/UpdateContainerResources");
  REQUIRE(sent.size() == 1);
  cri::UpdateContainerResourcesRequest expected;
  expected.set_container_id(id);
  expected.mutable_linux()->set_cpuset_cpus("6-7");  // owned fields only
  CHECK(sent[0].SerializeAsString() == expected.SerializeAsString());
  CHECK(f.shim().counters().applier_updates == 1);

  f.runtime().FailWith("/UpdateContainerResources",
                       grpc::Status(grpc::StatusCode::UNAVAILABLE, "runtime restarting"));
  std::ofstream(result_file) << "4-5\n";
  tick = f.host().reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->apply_failures == 1);
  CHECK(f.shim().counters().applier_failures == 1);
  f.runtime().ClearFailures();
  tick = f.host().reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->containers_applied == 1);
  sent = f.runtime().Requests<cri::UpdateContainerResourcesRequest>("/UpdateContainerResources");
  CHECK(sent.back().linux().cpuset_cpus() == "4-5");
}

// containerd reads a container's spec when StartContainer begins, and an update that finds no
// container (create in flight) or lands during the start never reaches the new cgroup; the
// shim re-applies qrm's newest values once the runtime confirms each call.
TEST_CASE("Values qrm changes while a create or a start is in flight reach the container",
          "[cri_shim][applier]") {
  ShimFixture f;
  f.StartHost();
  const std::string result_file = f.File("cpu-result");
  f.StartCpuPlugin({"--need-reconcile", "--result-file", result_file});
  f.Open();
  const auto pod = f.PodConfig("uid-f", "web");
  const std::string sandbox = f.RunPod(pod);
  auto updates_with = [&](const std::string& cpus) {
    int n = 0;
    for (const auto& u :
         f.runtime().Requests<cri::UpdateContainerResourcesRequest>("/UpdateContainerResources")) {
      if (u.linux().cpuset_cpus() == cpus) ++n;
    }
    return n;
  };

  // Create in flight: reconcile's update finds no container and fails.
  f.runtime().SetSlow("/CreateContainer");
  std::string id;
  grpc::Status created;
  std::thread creator(
      [&] { created = f.CreateContainer(f.ContainerRequest(sandbox, pod, "app"), &id); });
  REQUIRE(WaitFor([&] { return f.host().state().GetContainer("uid-f", "app") != nullptr; }));
  std::ofstream(result_file) << "6-7\n";
  auto tick = f.host().reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->apply_failures == 1);
  creator.join();
  REQUIRE(created.ok());
  f.runtime().SetSlow("/CreateContainer", false);
  // Sent as soon as the runtime confirmed the create, not at some later tick.
  CHECK(updates_with("6-7") == 1);

  // Start in flight: reconcile's update is accepted but may not reach the task; sent again.
  f.runtime().SetSlow("/StartContainer");
  grpc::Status started;
  std::thread starter([&] {
    cri::StartContainerRequest start;
    start.set_container_id(id);
    cri::StartContainerResponse response;
    started = f.Runtime().StartContainer(f.Context().get(), start, &response);
  });
  REQUIRE(WaitFor([&] { return !f.runtime().Calls("/StartContainer").empty(); }));
  std::ofstream(result_file) << "4-5\n";
  tick = f.host().reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(updates_with("4-5") == 1);
  starter.join();
  REQUIRE(started.ok());
  CHECK(updates_with("4-5") == 2);

  // A start with nothing changed meanwhile sends nothing extra.
  f.runtime().SetSlow("/StartContainer", false);
  const size_t before =
      f.runtime()
          .Requests<cri::UpdateContainerResourcesRequest>("/UpdateContainerResources")
          .size();
  cri::StartContainerRequest again;
  again.set_container_id(id);
  cri::StartContainerResponse response;
  REQUIRE(f.Runtime().StartContainer(f.Context().get(), again, &response).ok());
  CHECK(f.runtime()
            .Requests<cri::UpdateContainerResourcesRequest>("/UpdateContainerResources")
            .size() == before);
}

TEST_CASE("The view lists pods with a ready sandbox and reconcile collects the others",
          "[cri_shim][view]") {
  ShimFixture f;
  f.runtime().AddSandbox("uid-ready", "a", "default", true);
  f.runtime().AddSandbox("uid-stopped", "b", "default", false);
  f.StartHost();
  f.StartCpuPlugin();
  f.Open();
  auto live = f.shim().view().ListPodUids();
  REQUIRE(live.ok());
  CHECK(*live == std::set<std::string>{"uid-ready"});

  // A pod whose sandbox stops behind qrm's back (straight at the runtime).
  const auto pod = f.PodConfig("uid-gc", "web");
  const std::string sandbox = f.RunPod(pod);
  REQUIRE(f.CreateContainer(f.ContainerRequest(sandbox, pod, "app"), nullptr).ok());
  auto direct = cri::RuntimeService::NewStub(grpc::CreateChannel(
      "unix://" + f.runtime().socket_path(), grpc::InsecureChannelCredentials()));
  cri::StopPodSandboxRequest stop;
  stop.set_pod_sandbox_id(sandbox);
  cri::StopPodSandboxResponse stopped;
  REQUIRE(direct->StopPodSandbox(f.Context().get(), stop, &stopped).ok());
  REQUIRE(f.host().state().GetPod("uid-gc"));
  auto tick = f.host().reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->pods_collected == 1);
  CHECK_FALSE(f.host().state().GetPod("uid-gc"));
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-gc") == 1);
}

TEST_CASE("A container created and never started is forgotten when its sandbox is removed",
          "[cri_shim][soak]") {
  // The shim remembers each created container's values until StartContainer. One removed
  // with its sandbox (no RemoveContainer of its own) was remembered for good.
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  f.Open();
  const auto pod = f.PodConfig("uid-never-started", "web");
  const std::string sandbox = f.RunPod(pod);
  REQUIRE(f.CreateContainer(f.ContainerRequest(sandbox, pod, "app"), nullptr).ok());
  CHECK(f.shim().created_not_started() == 1);
  cri::RemovePodSandboxRequest remove;
  remove.set_pod_sandbox_id(sandbox);
  cri::RemovePodSandboxResponse removed;
  REQUIRE(f.Runtime().RemovePodSandbox(f.Context().get(), remove, &removed).ok());
  CHECK(f.shim().created_not_started() == 0);
}

TEST_CASE("A StopPodSandbox in flight owns the pod's release, a reconcile tick meanwhile leaves it",
          "[cri_shim][release][view]") {
  ShimFixture f;
  f.StartHost();
  f.StartCpuPlugin();
  f.Open();
  const auto pod = f.PodConfig("uid-stop", "web");
  const std::string sandbox = f.RunPod(pod);
  REQUIRE(f.CreateContainer(f.ContainerRequest(sandbox, pod, "app"), nullptr).ok());
  const uint64_t releases = f.shim().counters().releases;

  // The runtime marks the sandbox not ready at once but answers only after 1 s, as
  // containerd does while it tears the sandbox down.
  f.runtime().SetSlow("/StopPodSandbox");
  auto stop = std::async(std::launch::async, [&] { return Call(f, "StopPodSandbox", sandbox); });
  REQUIRE(WaitFor([&] {
    auto live = f.shim().view().ListPodUids();
    return live.ok() && !live->contains("uid-stop");
  }));
  auto tick = f.host().reconciler().RunOnce();
  REQUIRE(tick.ok());
  // Still in flight: nothing released yet, by anyone.
  REQUIRE(stop.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);
  CHECK(tick->pods_collected == 0);
  CHECK(tick->releases_deferred == 1);
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-stop") == 0);
  CHECK(f.host().state().GetPod("uid-stop"));

  // The runtime confirms: the stop path releases, once.
  REQUIRE(stop.get().ok());
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-stop") == 1);
  CHECK_FALSE(f.host().state().GetPod("uid-stop"));
  CHECK(f.shim().counters().releases == releases + 1);
  auto after = f.host().reconciler().RunOnce();
  REQUIRE(after.ok());
  CHECK(after->pods_collected == 0);
  CHECK(f.PluginCalls("cpu", "RemovePod", "uid-stop") == 1);
}

}  // namespace
}  // namespace qrm::shim::testing
