// Knobs shared by the chaos tests: root check, seed and kill counts from the environment
// (see README.md), and starting a node with the flags the chaos tests use.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "tests/e2e/host/node_fixture.h"

namespace qrm::chaos {

inline bool Root() {
  return e2e::Root("chaos");
}

using Clock = std::chrono::steady_clock;

inline long Ms(Clock::duration d) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

inline int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::atoi(v);
}

// QRM_CHAOS_SEED if set, else a random one; printed so that a failure can be replayed.
inline uint64_t Seed() {
  const char* v = std::getenv("QRM_CHAOS_SEED");
  const uint64_t seed =
      v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : std::random_device()();
  WARN("QRM_CHAOS_SEED=" << seed);
  return seed;
}

// Host flags of every chaos node: a short plugin deadline so faults resolve quickly.
inline std::vector<std::string> HostFlags() {
  return {"--plugin-rpc-timeout", "2s"};
}

// The three plugins (no reclaimed pool: a dedicated pod can take one of the 2 CPUs) and the
// host, every plugin registered.
// The host starts first: at start it removes plugin sockets nobody listens on, which can
// catch a plugin between bind and listen.
inline void StartPlugin(e2e::NodeFixture& node, const std::string& which);
inline void StartNode(e2e::NodeFixture& node, const std::string& state_dir = "") {
  node.StartHost(HostFlags(), state_dir);
  for (const char* which : {"cpu", "memory", "nic"}) StartPlugin(node, which);
  const bool healthy = node.WaitPluginsHealthy(3) && node.WaitReady();
  if (!healthy) UNSCOPED_INFO(node.Logs());
  REQUIRE(healthy);
}

inline void StartPlugin(e2e::NodeFixture& node, const std::string& which) {
  if (which == "cpu") {
    node.StartPlugin("cpu", {"--reclaimed-pool-size", "0", "--metrics-address",
                             "127.0.0.1:" + std::to_string(node.cpu_metrics_port())});
  } else if (which == "nic") {
    node.StartPlugin("nic", {"--include-virtual", "--unknown-nic-speed-mbps", "10000"});
  } else {
    node.StartPlugin(which);
  }
}

}  // namespace qrm::chaos
