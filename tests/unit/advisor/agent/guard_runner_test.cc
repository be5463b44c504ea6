// The guard in qrm-advisor on a fake node: what it asks qrm-host to hold, how it renews,
// restores and takes its throttles back after a restart, and what it evicts in each mode.
#include "advisor/agent/guard_runner.h"

#include <catch2/catch.hpp>

#include "advisor/agent/kube_evictor.h"
#include "testing/kube/test_api_server.h"
#include "tests/unit/advisor/agent/fake_node.h"

namespace qrm::advisor {
namespace {

constexpr int64_t kT0 = 1'800'000'000;
constexpr int64_t kSecond = 1'000'000'000;

// qrm-host's throttle calls, answered in process.
class FakeHost : public ThrottleTarget {
 public:
  StatusOr<admin::v1::CpuThrottle> Set(const ContainerThrottle& t) override {
    sets.push_back(t);
    if (fail) return UnavailableError("qrm-host down");
    admin::v1::CpuThrottle& held = holds[t.pod_uid + "/" + t.container];
    held.set_pod_uid(t.pod_uid);
    held.set_container(t.container);
    held.set_quota_us(t.quota_us);
    held.set_period_us(t.period_us);
    if (held.since_unix() == 0) {  // qrm-host keeps the first call's restore values
      held.set_restore_quota_us(t.restore_quota_us);
      held.set_restore_period_us(t.restore_period_us);
    }
    if (held.since_unix() == 0) held.set_since_unix(++clock);
    return held;
  }
  Status Clear(const std::string& uid, const std::string& container) override {
    clears.push_back(uid + "/" + container);
    holds.erase(uid + "/" + container);
    return Status::Ok();
  }
  StatusOr<std::vector<admin::v1::CpuThrottle>> List() override {
    std::vector<admin::v1::CpuThrottle> out;
    for (const auto& [key, t] : holds) out.push_back(t);
    return out;
  }
  std::vector<ContainerThrottle> sets;
  std::vector<std::string> clears;
  std::map<std::string, admin::v1::CpuThrottle> holds;
  bool fail = false;
  int64_t clock = 0;
};

class FakeEvictor : public guard::Evictor {
 public:
  guard::EvictOutcome Evict(const guard::GuardCandidate& pod) override {
    evicted->push_back(pod.Key());
    return guard::EvictOutcome::kEvicted;
  }
  std::shared_ptr<std::vector<std::string>> evicted = std::make_shared<std::vector<std::string>>();
};

// A 4-CPU node: web (shared_cores), batch-a and batch-b (reclaimed_cores), one container each.
struct GuardNode {
  fake::Tree tree;
  std::vector<TrackedContainer> running;
  HostView view;
  std::unique_ptr<Agent> agent;
  std::map<std::string, double> cpu_seconds;
  double node_busy = 0;
  int64_t t = 0;

  GuardNode() {
    running = {fake::Container("web", "app"), fake::Container("batch-a", "job"),
               fake::Container("batch-b", "job")};
    view.containers["web-uid/app"] = {"web", "default", "shared_cores", ""};
    view.containers["batch-a-uid/job"] = {"batch-a", "default", "reclaimed_cores", ""};
    view.containers["batch-b-uid/job"] = {"batch-b", "default", "reclaimed_cores", ""};
    agent = fake::MakeAgent(tree, &view, &running);
  }

  // One second at these rates (cores), then a tick; the node uses their sum.
  void Tick(double web, double a, double b, bool node_stat = true) {
    const std::map<std::string, double> rate = {{"/kubepods/podweb/app", web},
                                                {"/kubepods/podbatch-a/job", a},
                                                {"/kubepods/podbatch-b/job", b}};
    for (const auto& [path, r] : rate) {
      cpu_seconds[path] += r;
      tree.SetContainer(path, cpu_seconds[path], 100 << 20);
    }
    node_busy += web + a + b;
    tree.SetNode(node_busy, 4.0 * static_cast<double>(t + 1), 1ULL << 30);
    if (!node_stat) std::filesystem::remove(tree.procfs_root() + "/stat");
    agent->Tick(kT0 + t, (t + 1) * kSecond);
    ++t;
  }
  int64_t now() const { return kT0 + t - 1; }
};

std::string WritePolicy(const fake::Tree& tree, const std::string& mode, double watermark = 3.0) {
  const std::string path = tree.File("guard.json");
  fake::Write(path, fmt::format(R"({{"objectiveEnsurances": [
      {{"name": "cpu", "metricRule": {{"name": "cpu_total_usage", "value": {}}},
        "actionName": "throttle-evict", "restoreThreshold": 2, "restoreMargin": 0.5}}],
    "throttle": {{"minCPURatio": 10, "belowRequest": true}},
    "eviction": {{"mode": "{}", "coolDownSeconds": 0}}}})",
                                watermark, mode));
  return path;
}

struct Guarded {
  GuardNode node;
  FakeHost* host = nullptr;
  std::shared_ptr<std::vector<std::string>> evicted;
  std::unique_ptr<GuardRunner> runner;

  explicit Guarded(const std::string& mode = "dry-run") {
    Make(mode, std::make_unique<FakeHost>());
  }
  void Make(const std::string& mode, std::unique_ptr<FakeHost> fake_host) {
    GuardRunnerOptions o;
    o.policy_file = WritePolicy(node.tree, mode);
    o.lease_s = 10;
    host = fake_host.get();
    auto evictor = std::make_unique<FakeEvictor>();
    evicted = evictor->evicted;
    Evictors evictors;
    evictors[guard::EvictMode::kCri] = std::move(evictor);
    runner = std::make_unique<GuardRunner>(o, std::move(fake_host), std::move(evictors));
    REQUIRE(runner->Start().ok());
  }
  void Round(double web, double a, double b) {
    node.Tick(web, a, b);
    runner->Round(*node.agent, node.now());
  }
  std::set<std::string> SetPods() const {
    std::set<std::string> out;
    for (const auto& s : host->sets) out.insert(s.pod_uid);
    return out;
  }
};

TEST_CASE("the guard has qrm-host throttle only the pod that closes the gap", "[guard]") {
  Guarded g;
  g.Round(1.0, 1.5, 1.0);  // the first reading has no rates: nothing to act on
  CHECK(g.host->sets.empty());
  g.Round(1.0, 1.5, 1.0);  // 3.5 cores > 3.0
  REQUIRE_FALSE(g.host->sets.empty());
  CHECK(g.SetPods() == std::set<std::string>{"batch-a-uid"});
  const ContainerThrottle& t = g.host->sets.back();
  CHECK(t.container == "job");
  // 10 % steps from its 1.5 cores, just enough for the 0.5-core gap: 1.5 x 0.9^4.
  CHECK(t.quota_us == Approx(98415).margin(1500));
  CHECK(t.restore_quota_us == -1);
  CHECK(t.lease_s == 10);
  CHECK_THAT(t.reason, Catch::Contains("cpu_total_usage"));
  const GuardSnapshot snap = g.runner->Snapshot();
  CHECK(snap.throttled.contains("default/batch-a"));
  REQUIRE_FALSE(snap.recent.empty());
  CHECK(snap.recent.back().action == "throttle");
  CHECK_THAT(snap.recent.back().detail, Catch::Contains("for cpu: cpu_total_usage 3.5 > 3"));
}

TEST_CASE("the guard renews its leases at half and restores then releases", "[guard]") {
  Guarded g;
  g.Round(1.0, 1.5, 1.0);
  g.Round(1.0, 1.5, 1.0);
  const size_t after_throttle = g.host->sets.size();
  const int64_t quota = g.host->sets.back().quota_us;
  // The throttle holds usage at the quota: the node sits at the watermark, no new action.
  const double held = static_cast<double>(quota) / 100000.0;
  for (int i = 0; i < 4; ++i) g.Round(1.0, held, 0.9);
  CHECK(g.host->sets.size() == after_throttle);
  g.Round(1.0, held, 0.9);  // 5 s after the throttle: half the 10 s lease
  REQUIRE(g.host->sets.size() == after_throttle + 1);
  CHECK(g.host->sets.back().quota_us == quota);
  // The load goes away: two samples below the watermark (restoreThreshold 2), then steps up.
  for (int i = 0; i < 30 && !g.host->holds.empty(); ++i) g.Round(0.2, 0.1, 0.1);
  CHECK(g.host->holds.empty());
  CHECK(g.host->clears == std::vector<std::string>{"batch-a-uid/job"});
  CHECK(g.runner->Snapshot().throttled.empty());
}

TEST_CASE("after a restart the guard takes back what qrm-host holds for it", "[guard]") {
  Guarded g;
  g.Round(1.0, 1.5, 1.0);
  g.Round(1.0, 1.5, 1.0);
  REQUIRE(g.host->holds.size() == 1);
  auto host = std::make_unique<FakeHost>();
  host->holds = g.host->holds;
  g.Make("dry-run", std::move(host));
  const int64_t quota = g.host->holds.begin()->second.quota_us();
  const double held = static_cast<double>(quota) / 100000.0;
  g.Round(1.0, held, 1.0);
  // Renewed at once (the lease it had may be nearly gone), at the same quota.
  REQUIRE_FALSE(g.host->sets.empty());
  CHECK(g.host->sets.front().quota_us == quota);
  CHECK(g.runner->Snapshot().throttled.contains("default/batch-a"));
  // Restore continues from there.
  for (int i = 0; i < 30 && !g.host->holds.empty(); ++i) g.Round(0.2, 0.1, 0.1);
  CHECK(g.host->holds.empty());
}

TEST_CASE("after a restart the pod's own limit comes from qrm-host, not the runtime", "[guard]") {
  Guarded g;
  // batch-a has a limit of 1.5 cores.
  for (TrackedContainer& c : g.node.running) {
    if (c.pod_name != "batch-a") continue;
    c.cpu_quota_us = 150000;
    c.cpu_period_us = 100000;
    c.cpu_limit = 1.5;
  }
  g.Round(1.0, 1.5, 1.0);
  g.Round(1.0, 1.5, 1.0);
  REQUIRE(g.host->holds.size() == 1);
  const int64_t quota = g.host->holds.begin()->second.quota_us();
  CHECK(g.host->holds.begin()->second.restore_quota_us() == 150000);
  // qrm-advisor restarts and the runtime now shows the throttle as the container's quota.
  for (TrackedContainer& c : g.node.running) {
    if (c.pod_name != "batch-a") continue;
    c.cpu_quota_us = quota;
    c.cpu_limit = static_cast<double>(quota) / 100000.0;
  }
  auto host = std::make_unique<FakeHost>();
  host->holds = g.host->holds;
  host->holds.begin()->second.set_state("restoring");  // qrm-host is giving it back: not taken
  auto restoring = std::make_unique<FakeHost>();
  restoring->holds = host->holds;
  g.Make("dry-run", std::move(restoring));
  g.Round(1.0, static_cast<double>(quota) / 100000.0, 0.9);
  CHECK(g.runner->Snapshot().throttled.empty());
  CHECK(g.host->sets.empty());
  host->holds.begin()->second.set_state("applied");
  g.Make("dry-run", std::move(host));
  g.Round(1.0, static_cast<double>(quota) / 100000.0, 0.9);
  const GuardSnapshot snap = g.runner->Snapshot();
  REQUIRE(snap.throttled.contains("default/batch-a"));
  CHECK(snap.throttled.at("default/batch-a").ceiling == Approx(1.5));
  REQUIRE_FALSE(g.host->sets.empty());
  CHECK(g.host->sets.front().quota_us == quota);
  CHECK(g.host->sets.front().restore_quota_us == 150000);
}

TEST_CASE("without a node sample the guard touches nobody", "[guard]") {
  Guarded g;
  g.Round(1.0, 1.5, 1.0);
  g.node.Tick(1.0, 1.5, 1.0, /*node_stat=*/false);  // the containers are sampled, the node not
  g.runner->Round(*g.node.agent, g.node.now());
  CHECK(g.host->sets.empty());
  CHECK(g.runner->Snapshot().missing_metrics == std::vector<std::string>{"cpu_total_usage"});
}

TEST_CASE("dry-run eviction names the pods and evicts nobody") {
  Guarded g("dry-run");
  g.Round(2.5, 0.5, 0.5);
  // The shared pod alone is over a watermark of 1.2: throttling the reclaimed pods to their
  // floor cannot close the gap, so they are offered for eviction.
  GuardRunnerOptions o;
  o.policy_file = WritePolicy(g.node.tree, "dry-run", 1.2);
  g.runner = std::make_unique<GuardRunner>(o, std::make_unique<FakeHost>(), Evictors{});
  REQUIRE(g.runner->Start().ok());
  g.Round(2.5, 0.5, 0.5);
  bool would = false;
  for (const GuardAction& a : g.runner->Snapshot().recent) would |= a.action == "would-evict";
  CHECK(would);
  CHECK(g.evicted->empty());
}

TEST_CASE("cri eviction evicts the reclaimed pods the floors leave over the watermark") {
  Guarded g("cri");
  GuardRunnerOptions o;
  o.policy_file = WritePolicy(g.node.tree, "cri", 1.2);
  auto evictor = std::make_unique<FakeEvictor>();
  auto evicted = evictor->evicted;
  Evictors evictors;
  evictors[guard::EvictMode::kCri] = std::move(evictor);
  g.runner = std::make_unique<GuardRunner>(o, std::make_unique<FakeHost>(), std::move(evictors));
  REQUIRE(g.runner->Start().ok());
  g.Round(2.5, 0.5, 0.5);
  g.Round(2.5, 0.5, 0.5);
  REQUIRE_FALSE(evicted->empty());
  for (const std::string& pod : *evicted) CHECK(pod != "default/web");
}

// Mode api against an in-process API server speaking the Eviction REST path over HTTPS: the
// floors leave the gap open, so the reclaimed pods are evicted; the one a PodDisruptionBudget
// protects (429) is passed over for the next; the shared pod is never touched.
TEST_CASE("api eviction goes through the Eviction API and moves on past a 429", "[guard]") {
  testing::TestApiServer server({.tls = true});
  REQUIRE(server.Start().ok());
  server.SetEvictionAnswer("default", "batch-a", testing::EvictionAnswer::kBudget);
  kube::ClusterConfig config;
  config.server = server.url();
  config.ca_data = server.pki().ca.cert_pem;
  config.token = "test-token";
  auto client = kube::KubeClient::Create(config);
  REQUIRE(client.ok());
  Guarded g("api");
  GuardRunnerOptions o;
  o.policy_file = WritePolicy(g.node.tree, "api", 1.2);
  Evictors evictors;
  evictors[guard::EvictMode::kApi] = std::make_unique<KubeEvictor>(std::move(*client));
  g.runner = std::make_unique<GuardRunner>(o, std::make_unique<FakeHost>(), std::move(evictors));
  REQUIRE(g.runner->Start().ok());
  g.Round(2.5, 0.6, 0.5);
  g.Round(2.5, 0.6, 0.5);
  const auto seen = server.evictions();
  std::vector<std::string> names;
  for (const auto& e : seen) names.push_back(e.name);
  // batch-a uses more CPU, so it comes first; its 429 sends the walk on to batch-b.
  REQUIRE(names.size() >= 2);
  CHECK(names[0] == "batch-a");
  CHECK(names[1] == "batch-b");
  CHECK(seen[0].code == 429);
  CHECK(seen[1].code == 201);
  CHECK(seen[1].grace_period_seconds == 30);
  for (const auto& name : names) CHECK(name != "web");
  bool evicted_b = false;
  for (const GuardAction& a : g.runner->Snapshot().recent) {
    evicted_b |= a.action == "evict" && a.pod == "default/batch-b" &&
                 a.detail.find("evicted") != std::string::npos;
  }
  CHECK(evicted_b);

  // The same node in dry-run with the API evictor at hand: the API server hears nothing.
  const size_t before = server.evictions().size();
  GuardRunnerOptions dry;
  dry.policy_file = WritePolicy(g.node.tree, "dry-run", 1.2);
  auto again = kube::KubeClient::Create(config);
  REQUIRE(again.ok());
  Evictors with_api;
  with_api[guard::EvictMode::kApi] = std::make_unique<KubeEvictor>(std::move(*again));
  g.runner = std::make_unique<GuardRunner>(dry, std::make_unique<FakeHost>(), std::move(with_api));
  REQUIRE(g.runner->Start().ok());
  g.Round(2.5, 0.6, 0.5);
  g.Round(2.5, 0.6, 0.5);
  CHECK(server.evictions().size() == before);
  bool would = false;
  for (const GuardAction& a : g.runner->Snapshot().recent) would |= a.action == "would-evict";
  CHECK(would);
}

TEST_CASE("a pod's quota goes to the containers that use the CPU", "[guard]") {
  GuardedPod pod{"uid", {{"main", 0.9, 0, 0}, {"sidecar", 0.05, 0, 0}}};
  CHECK(SplitQuota(pod, 0.5, 100000) == std::vector<int64_t>{50000, 0});
  pod.containers[1].cpu = 0.3;
  CHECK(SplitQuota(pod, 0.6, 100000) == std::vector<int64_t>{45000, 15000});
  GuardedPod unsampled{"uid", {{"a", std::nullopt, 0, 0}, {"b", std::nullopt, 0, 0}}};
  CHECK(SplitQuota(unsampled, 0.5, 100000) == std::vector<int64_t>{25000, 25000});
  GuardedPod limited{"uid", {{"a", 1.0, 100000, 100000}, {"b", 0.5, 0, 0}}};
  CHECK(SplitQuota(limited, 1.8, 100000) == std::vector<int64_t>{100000, 60000});  // a's limit
  GuardedPod tiny{"uid", {{"a", 1.0, 0, 0}}};
  CHECK(SplitQuota(tiny, 0.001, 100000) == std::vector<int64_t>{1000});  // the kernel's minimum
}

}  // namespace
}  // namespace qrm::advisor
