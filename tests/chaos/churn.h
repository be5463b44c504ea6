// Churn: worker threads that keep creating, starting, stopping and removing pods through
// the shim, as a kubelet would, while a test injects faults. Errors are expected while the
// host or a plugin is down: the workers count them, back off briefly and go on; pods they
// could not remove are retried (through the shim) on their next turns.
//
// Each worker holds at most `max_pods` pods, so a pause leaves a handful running for the
// invariant checks. No Catch2 macro runs on the workers (Catch2 is not thread-safe).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/host/node_fixture.h"

namespace qrm::chaos {

struct ChurnOptions {
  int workers = 3;
  int max_pods = 2;
  // QoS mix of new pods; the rest are shared_cores.
  double dedicated_share = 0.2;
  double reclaimed_share = 0.3;
};

struct ChurnCounts {
  int created = 0;  // container running
  int removed = 0;  // pod removed through the shim
  int refused = 0;  // CreateContainer refused while host and plugins were up (capacity)
  int failed = 0;   // any other error (expected while a process is down)
};

class Churn {
 public:
  Churn(e2e::NodeFixture& node, uint64_t seed, ChurnOptions options = {});
  ~Churn();
  Churn(const Churn&) = delete;
  Churn& operator=(const Churn&) = delete;

  void Start();
  // Returns once every worker finished its current operation and waits.
  void Pause();
  void Resume();
  void Stop();
  ChurnCounts counts() const;
  // Waits until the workers completed a create or a removal after `since` was taken;
  // false at the deadline. Lets a fault land on a churn that is really running, whatever
  // the machine's speed.
  bool WaitProgress(const ChurnCounts& since, std::chrono::milliseconds timeout);

 private:
  struct HeldPod {
    e2e::Pod pod;
    std::string uid;
  };
  void Work(int index, uint64_t seed);
  void Create(e2e::CriClient& shim, int index, int serial, double roll, std::vector<HeldPod>& held,
              bool& error);

  e2e::NodeFixture& node_;
  const uint64_t seed_;
  const ChurnOptions options_;
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool paused_ = false;
  bool stopped_ = false;
  int idle_ = 0;
  ChurnCounts counts_;
};

}  // namespace qrm::chaos
