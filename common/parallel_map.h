// Runs independent blocking calls (plugin RPCs) in parallel on a bounded pool
// and waits for all of them. The caller runs the last call itself rather than
// sit idle: one thread hop less per admission, and a pool of half the threads
// serves as many concurrent admissions. The caller must not be a thread of
// `pool` itself, or it could wait for work queued behind it.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

namespace qrm {

template <typename R>
std::vector<R> ParallelMap(boost::asio::thread_pool& pool, size_t n,
                           const std::function<R(size_t)>& fn) {
  std::vector<std::future<R>> futures;
  futures.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    auto task = std::make_shared<std::packaged_task<R()>>([&fn, i] { return fn(i); });
    futures.push_back(task->get_future());
    if (i + 1 < n) {
      boost::asio::post(pool, [task] { (*task)(); });
    } else {
      // As a task, so that an exception waits in its future like the others' and every
      // posted call (which holds `fn` by reference) has finished before it propagates.
      (*task)();
    }
  }
  std::vector<R> results;
  results.reserve(n);
  for (auto& f : futures) results.push_back(f.get());
  return results;
}

}  // namespace qrm
