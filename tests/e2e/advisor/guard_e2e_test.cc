// The watermark guard end to end on this machine (2 CPUs): reclaimed busybox pods that spin push
// the node's real CPU usage over a watermark; qrm-advisor's guard has qrm-host throttle the
// fewest pods needed (read back from each container's cgroup cpu.cfs_quota_us), the node falls
// below the watermark, the other pods are untouched; the throttle outlives kills of qrm-host,
// the CPU plugin and qrm-advisor; when the load stops, the quota is restored.
#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include "api/admin_v1.grpc.pb.h"
#include "api/advisor_v1.grpc.pb.h"
#include "tests/e2e/advisor/advisor_fixture.h"

namespace qrm::e2e {
namespace {

namespace av = ::qrm::advisor::v1;
namespace adm = ::qrm::admin::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// The container's cpu.cfs_quota_us (-1: none), read on the host; 0 when it cannot be read.
int64_t Quota(CriClient& cri, const std::string& id) {
  auto quota = cri.ContainerCgroupCpuQuota(id);
  return quota.ok() ? *quota : 0;
}

// The throttled node sits a few hundredths below the watermark; a restore margin of 0.25 keeps
// sampling noise (processes killed and restarted on 2 cores) from starting the restore early.
std::string Policy(double watermark) {
  return fmt::format(R"({{"objectiveEnsurances": [
      {{"name": "cpu-usage", "metricRule": {{"name": "cpu_total_usage", "value": {:.2f}}},
        "actionName": "throttle", "avoidanceThreshold": 2, "restoreThreshold": 3,
        "restoreMargin": 0.25}}],
    "throttle": {{"stepCPURatio": 10, "minCPURatio": 10, "belowRequest": true}}}})",
                     watermark);
}

struct GuardNode {
  NodeFixture node;
  std::unique_ptr<testing::ChildProcess> advisor;
  std::string policy = node.File("guard.json");

  void StartAdvisor() {
    advisor = e2e::StartAdvisor(
        node, {"--pool-control-file", "", "--guard-policy", policy, "--guard-lease", "30s"});
  }
  std::optional<double> NodeCpu() {
    auto r = e2e::Usage(*AdvisorStub(node));
    if (!r || r->node().cpu().samples() == 0) return std::nullopt;
    return r->node().cpu().latest();
  }
  std::vector<adm::CpuThrottle> Throttles() {
    auto stub = adm::Admin::NewStub(
        grpc::CreateChannel("unix:" + node.AdminSocket(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
    adm::ListCpuThrottlesResponse r;
    if (!stub->ListCpuThrottles(&ctx, {}, &r).ok()) return {};
    return {r.throttles().begin(), r.throttles().end()};
  }
  std::string Logs() {
    std::string log = testing::ReadFile(node.File("qrm-advisor.log"));
    if (log.size() > 6000) log = log.substr(log.size() - 6000);
    return node.Logs() + "--- qrm-advisor.log\n" + log;
  }
};

// The node's CPU as the advisor sampled it, averaged over `n` fresh samples.
double AverageNodeCpu(GuardNode& g, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    std::this_thread::sleep_for(seconds(1));
    sum += g.NodeCpu().value_or(0);
  }
  return sum / n;
}

TEST_CASE("the guard throttles the fewest reclaimed pods and restores them when load stops") {
  if (!Root("guard e2e")) return;
  GuardNode g;
  g.node.StartQrm({"--reclaimed-pool-size", "0"});
  testing::WriteFile(g.policy, Policy(64));  // far above the node: nothing to do yet
  g.StartAdvisor();
  REQUIRE(WaitSlowly([&] { return g.NodeCpu().has_value(); }, seconds(30)));
  CriClient shim = g.node.Shim();
  std::vector<std::string> ids, pods;
  for (const char* name : {"burn-a", "burn-b"}) {
    auto pod =
        shim.RunHostNetworkPod(name, std::string(name) + "-uid", "default", Qos("reclaimed_cores"));
    REQUIRE(pod.ok());
    pods.push_back(pod->id);
    auto id = shim.CreateAndStartContainer(*pod, Spinner("main"));
    REQUIRE(id.ok());
    ids.push_back(*id);
  }
  std::this_thread::sleep_for(seconds(3));
  const double before = AverageNodeCpu(g, 3);
  INFO("node usage with both spinners: " << before << " cores");
  REQUIRE(before > 0.8);
  CHECK(Quota(shim, ids[0]) == -1);
  CHECK(Quota(shim, ids[1]) == -1);

  // A watermark 0.35 cores below the node: one spinner's quota closes the gap.
  const double watermark = before - 0.35;
  testing::WriteFile(g.policy, Policy(watermark));
  const auto breach = Clock::now();
  int throttled = -1;
  const bool seen = WaitSlowly(
      [&] {
        for (int i = 0; i < 2; ++i) {
          if (Quota(shim, ids[i]) > 0) throttled = i;
        }
        return throttled >= 0;
      },
      seconds(20));
  const double took = std::chrono::duration<double>(Clock::now() - breach).count();
  INFO(g.Logs());
  REQUIRE(seen);
  WARN("guard e2e: node " << before << " cores, watermark " << watermark << ", throttle in " << took
                          << " s (policy reload, 2 samples, host push)");
  const int other = 1 - throttled;
  const int64_t quota = Quota(shim, ids[throttled]);
  CHECK(quota > 0);
  CHECK(quota < 100000);
  CHECK(Quota(shim, ids[other]) == -1);  // the fewest pods: one
  auto held = g.Throttles();
  REQUIRE(held.size() == 1);
  CHECK(held[0].quota_us() == quota);
  CHECK(held[0].owner() == "qrm-advisor");
  std::this_thread::sleep_for(seconds(3));
  const double after = AverageNodeCpu(g, 3);
  WARN("guard e2e: node usage after the throttle " << after << " cores (watermark " << watermark
                                                   << ")");
  CHECK(after <= watermark + 0.1);

  // qrm-host, the CPU plugin and qrm-advisor die in turn: the quota stays what qrm-host's
  // checkpoint says.
  g.node.KillHost();
  g.node.StartHost();
  // The guard may retighten, or throttle the other pod too, while the node settles (restarts
  // load its 2 cores): the runtime must hold whatever qrm-host holds, and the first pod stays
  // throttled. A push in flight is the only moment they may differ.
  std::string mismatch;
  auto runtime_follows_host = [&] {
    const auto now = g.Throttles();
    mismatch = fmt::format("qrm-host holds {} throttle(s)", now.size());
    bool first_held = false, all_follow = true;
    for (const adm::CpuThrottle& t : now) {
      const int i = t.pod_uid() == "burn-a-uid" ? 0 : 1;
      const int64_t runtime = Quota(shim, ids[i]);
      mismatch += fmt::format("; {}: {} us ({}), runtime {}", t.pod_uid(), t.quota_us(), t.state(),
                              runtime);
      first_held |= i == throttled;
      all_follow &= runtime == t.quota_us();
    }
    return first_held && all_follow;
  };
  auto check_runtime_follows_host = [&] {
    const bool followed = WaitSlowly(runtime_follows_host, seconds(5));
    INFO(mismatch << "\n" << g.Logs());
    CHECK(followed);
  };
  REQUIRE(g.node.WaitPluginsHealthy(3));
  check_runtime_follows_host();
  g.node.KillPlugin("cpu");
  g.node.StartPlugin("cpu", {"--reclaimed-pool-size", "0"});
  REQUIRE(g.node.WaitPluginsHealthy(3));
  std::this_thread::sleep_for(seconds(3));  // re-registration replay and reconcile ticks
  check_runtime_follows_host();
  g.advisor->Kill(SIGKILL);
  g.StartAdvisor();
  REQUIRE(WaitSlowly(
      [&] {
        return testing::ReadFile(g.node.File("qrm-advisor.log")).find("taking back its throttle") !=
               std::string::npos;
      },
      seconds(30)));
  CHECK(Quota(shim, ids[throttled]) > 0);

  // The load stops: the other spinner goes; after 3 samples below watermark - 0.25 the quota is
  // raised in steps and then lifted.
  REQUIRE(shim.StopAndRemovePod(pods[other]).ok());
  const bool restored = WaitSlowly([&] { return Quota(shim, ids[throttled]) == -1; }, seconds(90));
  // qrm-host writes the unlimited quota first and forgets the throttle once the runtime has
  // it (state "restoring" in between: a crash there restores again rather than leaving the
  // container throttled), so the list empties a moment after the quota is lifted.
  const bool forgotten = WaitSlowly([&] { return g.Throttles().empty(); }, seconds(5));
  INFO(g.Logs());
  CHECK(restored);
  CHECK(forgotten);
}

}  // namespace
}  // namespace qrm::e2e
