// Host killed: pods churn through the shim on a real containerd while qrm-host is
// SIGKILLed at random moments and restarted; after every restart the checkpoint loads and
// the node is consistent (invariants.h). QRM_CHAOS_KILLS kills (default 50).
#include <chrono>
#include <random>

#include "tests/chaos/chaos_env.h"
#include "tests/chaos/churn.h"
#include "tests/chaos/invariants.h"

namespace qrm::chaos {
namespace {

using std::chrono::milliseconds;

TEST_CASE("qrm-host SIGKILLed at random points during pod churn stays consistent") {
  if (!Root()) return;
  const int kills = EnvInt("QRM_CHAOS_KILLS", 50);
  const uint64_t seed = Seed();
  std::mt19937_64 rng(seed);
  e2e::NodeFixture node;
  StartNode(node);
  e2e::CriClient direct = node.Direct();

  Churn churn(node, seed);
  churn.Start();
  const auto start = Clock::now();
  Clock::duration restart_total{}, settle_total{};
  for (int k = 0; k < kills; ++k) {
    // Let the churn run for a random while, then kill wherever the host happens to be,
    // but only once it has created or removed a pod since the last restart: a slow
    // machine then gets fewer operations per kill, never a kill of an idle churn.
    const ChurnCounts before = churn.counts();
    std::this_thread::sleep_for(milliseconds(100 + rng() % 900));
    const bool progressed = churn.WaitProgress(before, milliseconds(20000));
    if (!progressed) UNSCOPED_INFO("no pod created or removed after kill " << k << node.Logs());
    REQUIRE(progressed);
    node.KillHost();
    std::this_thread::sleep_for(milliseconds(rng() % 200));  // the workers see it down
    const auto restart = Clock::now();
    node.StartHost(HostFlags());  // fails the test if the checkpoint does not load
    const bool up = node.WaitReady() && node.WaitPluginsHealthy(3);
    if (!up) UNSCOPED_INFO(node.Logs());
    REQUIRE(up);
    restart_total += Clock::now() - restart;

    churn.Pause();
    const auto settle = Clock::now();
    std::vector<std::string> violations;
    const bool consistent =
        WaitConsistent(node, direct, 3 * e2e::kReconcilePeriod + milliseconds(2000), &violations);
    if (!consistent) {
      UNSCOPED_INFO("after kill " << k + 1 << " of " << kills << " (seed " << seed << "):\n"
                                  << Join(violations) << node.Logs());
    }
    REQUIRE(consistent);
    settle_total += Clock::now() - settle;
    churn.Resume();
  }
  churn.Stop();
  const ChurnCounts counts = churn.counts();
  WARN(kills << " kills in " << Ms(Clock::now() - start) << " ms; per kill: restart "
             << Ms(restart_total) / kills << " ms, consistent after " << Ms(settle_total) / kills
             << " ms; churn: " << counts.created << " created, " << counts.removed << " removed, "
             << counts.refused << " refused, " << counts.failed << " failed while down");
  CHECK(counts.created > 0);  // not only removals of pods whose containers failed
  std::vector<std::string> violations;
  CHECK(WaitConsistent(node, direct, milliseconds(5000), &violations));
  INFO(Join(violations));
}

}  // namespace
}  // namespace qrm::chaos
