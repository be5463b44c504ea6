// Runs a benchmark's independent steps on a fixed number of client threads, like a kubelet
// or a load generator with that many workers. Benchmark-only code.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace qrm::bench {

// Calls fn(i) for every i in [0, n) on `threads` threads; each thread takes the next index
// as it finishes one, so slow steps do not hold back the rest. Returns when all are done.
inline void ParallelFor(int n, int threads, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < std::max(1, std::min(threads, n)); ++t) {
    workers.emplace_back([&] {
      for (int i = next++; i < n; i = next++) fn(i);
    });
  }
  for (auto& w : workers) w.join();
}

}  // namespace qrm::bench
