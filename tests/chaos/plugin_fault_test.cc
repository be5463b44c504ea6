// Plugin killed or hung: pods churn while each plugin in turn is SIGKILLed and restarted
// (QRM_CHAOS_PLUGIN_KILLS, default 9); and a plugin that stops answering (SIGSTOP) makes
// admissions that need it fail at the host's deadline naming it, lets shared_cores ones
// proceed (failure policy "ignore"), leaves pass-through calls fast, and once it answers
// again (SIGCONT) the node is consistent.
#include <chrono>
#include <random>

#include <signal.h>

#include "tests/chaos/chaos_env.h"
#include "tests/chaos/churn.h"
#include "tests/chaos/invariants.h"

namespace qrm::chaos {
namespace {

using std::chrono::milliseconds;

TEST_CASE("each plugin SIGKILLed in turn during pod churn leaves the node consistent") {
  if (!Root()) return;
  const int kills = EnvInt("QRM_CHAOS_PLUGIN_KILLS", 9);
  const uint64_t seed = Seed();
  std::mt19937_64 rng(seed);
  e2e::NodeFixture node;
  StartNode(node);
  e2e::CriClient direct = node.Direct();

  Churn churn(node, seed);
  churn.Start();
  const char* plugins[] = {"cpu", "memory", "nic"};
  Clock::duration settle_total{};
  for (int k = 0; k < kills; ++k) {
    const std::string which = plugins[k % 3];
    std::this_thread::sleep_for(milliseconds(100 + rng() % 900));
    node.KillPlugin(which);
    std::this_thread::sleep_for(milliseconds(rng() % 500));  // admissions meet it dead
    StartPlugin(node, which);
    const bool healthy = node.WaitPluginsHealthy(3);
    if (!healthy) UNSCOPED_INFO(node.Logs());
    REQUIRE(healthy);

    churn.Pause();
    const auto settle = Clock::now();
    std::vector<std::string> violations;
    const bool consistent =
        WaitConsistent(node, direct, 3 * e2e::kReconcilePeriod + milliseconds(2000), &violations);
    if (!consistent) {
      UNSCOPED_INFO("after killing " << which << " (" << k + 1 << " of " << kills << ", seed "
                                     << seed << "):\n"
                                     << Join(violations) << node.Logs());
    }
    REQUIRE(consistent);
    settle_total += Clock::now() - settle;
    churn.Resume();
  }
  churn.Stop();
  const ChurnCounts counts = churn.counts();
  WARN(kills << " plugin kills; consistent after " << Ms(settle_total) / kills
             << " ms on average; churn: " << counts.created << " created, " << counts.removed
             << " removed, " << counts.refused << " refused, " << counts.failed << " failed");
  CHECK(counts.created > 0);
}

// How long `fn` takes.
template <typename F>
Clock::duration Timed(F&& fn) {
  const auto start = Clock::now();
  fn();
  return Clock::now() - start;
}

TEST_CASE("a hung plugin fails dedicated admissions at the deadline, not shared ones") {
  if (!Root()) return;
  e2e::NodeFixture node;
  StartNode(node);
  e2e::CriClient shim = node.Shim();
  e2e::CriClient direct = node.Direct();

  REQUIRE(::kill(node.plugin("cpu").pid(), SIGSTOP) == 0);

  // Dedicated: the cpu plugin is required; the admission fails at the 2 s deadline.
  auto dedicated =
      shim.RunHostNetworkPod("hung-d", "hung-d-uid", "chaos", e2e::Qos("dedicated_cores"));
  REQUIRE(dedicated.ok());
  StatusOr<std::string> refused = std::string();
  const auto took = Timed([&] { refused = shim.CreateContainer(*dedicated, e2e::OneCpu("main")); });
  WARN("dedicated admission with the cpu plugin hung failed after "
       << Ms(took) << " ms: " << refused.status().ToString());
  REQUIRE_FALSE(refused.ok());
  CHECK(took >= milliseconds(1900));
  CHECK(took <= milliseconds(2000 + 1500));
  CHECK_THAT(refused.status().message(), Catch::Contains("cpu"));
  auto running = ListRunning(direct);
  REQUIRE(running.ok());
  for (const auto& r : *running) CHECK(r.pod_uid != "hung-d-uid");
  auto allocations = node.Allocations();
  REQUIRE(allocations.ok());
  for (const auto& p : allocations->pods()) {
    for (const auto& c : p.containers())
      CHECK_FALSE((p.uid() == "hung-d-uid" && c.name() == "main"));
  }

  // Pass-through calls do not wait for plugins.
  for (int i = 0; i < 5; ++i) {
    const auto version = Timed([&] { REQUIRE(shim.Version().ok()); });
    const auto list = Timed([&] {
      e2e::cri::ListContainersResponse response;
      REQUIRE(shim.runtime().ListContainers(shim.Context().get(), {}, &response).ok());
    });
    CHECK(version < milliseconds(500));
    CHECK(list < milliseconds(500));
  }

  // Shared: failure policy "ignore" -> the container starts without the cpu plugin's part.
  auto shared = shim.RunHostNetworkPod("hung-s", "hung-s-uid", "chaos", e2e::Qos("shared_cores"));
  REQUIRE(shared.ok());
  auto started = shim.CreateAndStartContainer(*shared, e2e::OneCpu("main"));
  INFO(started.status().ToString());
  CHECK(started.ok());

  REQUIRE(::kill(node.plugin("cpu").pid(), SIGCONT) == 0);
  REQUIRE(shim.StopAndRemovePod(dedicated->id).ok());
  std::vector<std::string> violations;
  const bool consistent = WaitConsistent(node, direct, milliseconds(6000), &violations);
  if (!consistent) UNSCOPED_INFO(Join(violations) << node.Logs());
  CHECK(consistent);

  // The plugin answers again: a dedicated pod is admitted, and the shared pod admitted
  // without the cpu plugin must not share its CPU.
  auto again = shim.RunHostNetworkPod("after", "after-uid", "chaos", e2e::Qos("dedicated_cores"));
  REQUIRE(again.ok());
  auto created = shim.CreateAndStartContainer(*again, e2e::OneCpu("main"));
  INFO(created.status().ToString());
  REQUIRE(created.ok());
  const bool still = WaitConsistent(node, direct, milliseconds(6000), &violations);
  if (!still) UNSCOPED_INFO(Join(violations) << node.Logs());
  CHECK(still);
}

}  // namespace
}  // namespace qrm::chaos
