// ShimCounters: plain atomic counters for later metrics. Written with relaxed atomics on
// every call (no lock); read at any time, each value on its own (not a consistent snapshot).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace qrm::shim {

struct MethodCounters {
  std::atomic<uint64_t> calls{0};
  std::atomic<uint64_t> errors{0};  // answered with a non-OK status
};

struct ShimCounters {
  // One entry per method the shim knows (full gRPC names, "/runtime.v1.RuntimeService/Version"),
  // fixed at construction so lookups need no lock; other methods count in `unknown_methods`.
  explicit ShimCounters(const std::vector<std::string>& known_methods) {
    for (const auto& m : known_methods) by_method.try_emplace(m);
  }
  ShimCounters(const ShimCounters&) = delete;
  ShimCounters& operator=(const ShimCounters&) = delete;

  MethodCounters& Method(std::string_view full_name) {
    auto it = by_method.find(full_name);
    return it == by_method.end() ? unknown_methods : it->second;
  }
  const MethodCounters& Method(std::string_view full_name) const {
    auto it = by_method.find(full_name);
    return it == by_method.end() ? unknown_methods : it->second;
  }

  std::map<std::string, MethodCounters, std::less<>> by_method;
  MethodCounters unknown_methods;

  std::atomic<uint64_t> intercepted_calls{0};   // decoded and handled by qrm
  std::atomic<uint64_t> passthrough_calls{0};   // forwarded as opaque bytes
  std::atomic<uint64_t> errors{0};              // calls answered with a non-OK status
  std::atomic<uint64_t> admission_failures{0};  // CreateContainer refused by admission
  std::atomic<uint64_t> rollbacks{0};           // admissions undone after the runtime failed
  std::atomic<uint64_t> releases{0};            // containers/pods released after Remove*/Stop*
  std::atomic<uint64_t> applier_updates{0};     // reconcile updates sent to the runtime
  std::atomic<uint64_t> applier_failures{0};    // ... that failed
  // Time from the request being read to the runtime's answer, for pass-through unary calls.
  std::atomic<uint64_t> passthrough_latency_ns_sum{0};
  std::atomic<uint64_t> passthrough_latency_count{0};
};

}  // namespace qrm::shim
