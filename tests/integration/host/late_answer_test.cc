// An Allocate that answers after the host's deadline (qrm-test-plugin --delay) never leaks:
// within one reconcile tick after the late answer the plugin, the host checkpoint and
// pod-resources agree, under both failure policies, with and without need_reconcile.
#include <fstream>

#include <fmt/format.h>

#include "qrm/podresources/conversion.h"
#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

constexpr const char* kSlow = "test.qrm.io/slow";
constexpr std::chrono::milliseconds kDeadline{400};

int CallsFor(HostFixture& f, const std::string& method, const std::string& pod) {
  std::ifstream in(f.CallLogPath(kSlow));
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(method + " " + pod + " ", 0) == 0) ++n;
  }
  return n;
}

// What the plugin reports holding for (pod, container), or "" if nothing.
std::string PluginHolds(HostFixture& f, const std::string& pod, const std::string& container) {
  auto report = f.host().registry().Find(kSlow)->GetResourcesAllocation(std::chrono::seconds(2));
  REQUIRE(report.ok());
  auto p = report->pod_resources().find(pod);
  if (p == report->pod_resources().end()) return "";
  auto c = p->second.container_resources().find(container);
  if (c == p->second.container_resources().end()) return "";
  return c->second.resource_allocation().at(kSlow).allocation_result();
}

// A host whose Allocate deadline is kDeadline and a plugin that answers Allocate 3x later.
Host& StartSlow(HostFixture& f, bool need_reconcile) {
  HostOptions options = f.Options();
  options.admission.rpc_timeout = kDeadline;
  Host& host = f.StartHost(options);
  std::vector<std::string> flags = {
      "--oci-property", "CpusetCpus",
      "--result",       "1",
      "--delay",        fmt::format("Allocate:{}", 3 * kDeadline.count())};
  if (need_reconcile) flags.push_back("--need-reconcile");
  f.StartPlugin(kSlow, flags);
  REQUIRE(f.WaitRegistered(kSlow));
  return host;
}

TEST_CASE("a late Allocate under the ignore policy is adopted by the next tick",
          "[reconcile][late]") {
  const bool need_reconcile = GENERATE(false, true);
  INFO("need_reconcile=" << need_reconcile);
  HostFixture f;
  Host& host = StartSlow(f, need_reconcile);
  f.view().AddContainer({"late", "pod-late", "default", "c0"});
  auto admitted = host.admission().Admit(Request("late", "c0", {{kSlow, 1}}, "shared_cores"));
  REQUIRE(admitted.ok());
  REQUIRE(admitted->skipped_resources == std::vector<std::string>{kSlow});
  CHECK(host.state().GetContainer("late", "c0")->resources.empty());
  REQUIRE(WaitFor([&] { return PluginHolds(f, "late", "c0") == "1"; }));  // the late answer

  auto tick = host.reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->late_adopted == 1);
  CHECK(tick->replays == 0);
  const auto stored = host.state().GetContainer("late", "c0");
  REQUIRE(stored->resources.contains(kSlow));
  CHECK(stored->resources.at(kSlow).allocation_result() == "1");
  CHECK_FALSE(stored->request.annotations().contains(kSkippedResourcesAnnotation));
  // pod-resources answers from the checkpoint: the allocation is visible there now.
  podresources::PodResourcesMapping mapping;
  mapping.device_resources = {kSlow};
  const ::v1::PodResources listed =
      podresources::ToPodResources(*host.state().GetPod("late"), mapping);
  REQUIRE(listed.containers_size() == 1);
  REQUIRE(listed.containers(0).devices_size() == 1);
  CHECK(listed.containers(0).devices(0).resource_name() == kSlow);
  CHECK(listed.containers(0).devices(0).device_ids(0) == "1");
  // And the running container gets it.
  const auto calls = f.applier().calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].update.resources.cpuset_cpus() == "1");
  CHECK(CallsFor(f, "Allocate", "late") == 1);  // adopted, never asked again
  CHECK(CallsFor(f, "RemovePod", "late") == 0);

  f.applier().clear();
  auto steady = host.reconciler().RunOnce();
  REQUIRE(steady.ok());
  CHECK(steady->late_adopted == 0);
  CHECK(steady->replays == 0);
  CHECK(f.applier().calls().empty());
}

TEST_CASE("a late Allocate under the fail policy is released by the next tick",
          "[reconcile][late]") {
  const bool need_reconcile = GENERATE(false, true);
  INFO("need_reconcile=" << need_reconcile);
  HostFixture f;
  Host& host = StartSlow(f, need_reconcile);
  f.view().Set({"late"});  // the sandbox is ready; the container is never created
  auto refused = host.admission().Admit(Request("late", "c0", {{kSlow, 1}}, "dedicated_cores"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(CallsFor(f, "RemovePod", "late") == 1);  // the rollback, before the answer came
  // The late answer lands after the rollback: the plugin holds what nobody admitted.
  REQUIRE(WaitFor([&] { return PluginHolds(f, "late", "c0") == "1"; }));
  CHECK(host.state().GetContainer("late", "c0") == nullptr);

  auto tick = host.reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->unadmitted_released == 1);
  CHECK(tick->containers_adopted == 0);
  CHECK(PluginHolds(f, "late", "c0").empty());
  CHECK(CallsFor(f, "RemovePod", "late") == 2);
  CHECK(host.state().GetPod("late") == nullptr);
  CHECK(f.applier().calls().empty());

  auto steady = host.reconciler().RunOnce();
  REQUIRE(steady.ok());
  CHECK(steady->unadmitted_released == 0);
  CHECK(CallsFor(f, "RemovePod", "late") == 2);
}

TEST_CASE("an allocation of a removed container is released, the pod's others given back",
          "[reconcile][late]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin(kSlow, {"--oci-property", "CpusetCpus", "--result", "1"});  // no need_reconcile
  REQUIRE(f.WaitRegistered(kSlow));
  REQUIRE(host.admission().Admit(Request("p", "kept", {{kSlow, 1}})).ok());
  REQUIRE(host.admission().Admit(Request("p", "gone", {{kSlow, 1}})).ok());
  f.view().AddContainer({"p", "pod-p", "default", "kept"});
  REQUIRE(host.admission().RemoveContainer("p", "gone").ok());  // as the shim does
  REQUIRE(PluginHolds(f, "p", "gone") == "1");

  auto tick = host.reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->unadmitted_released == 1);
  CHECK(PluginHolds(f, "p", "gone").empty());
  CHECK(PluginHolds(f, "p", "kept") == "1");  // RemovePod, then replayed
  CHECK(CallsFor(f, "RemovePod", "p") == 1);
  CHECK(CallsFor(f, "Allocate", "p") == 3);
  CHECK(host.state().GetContainer("p", "kept") != nullptr);

  auto steady = host.reconciler().RunOnce();
  REQUIRE(steady.ok());
  CHECK(steady->unadmitted_released == 0);
  CHECK(steady->replays == 0);
}

}  // namespace
}  // namespace qrm::host::testing
