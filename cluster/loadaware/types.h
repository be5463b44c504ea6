// The vocabulary of the load-aware decision core (Koordinator's LoadAwareScheduling plugin,
// pkg/scheduler/plugins/loadaware, reproduced in C++; docs/loadaware-cases.md).
//
// Quantities are int64 in the units Koordinator's vectorizer reads them in: "cpu" in
// milli-cores (Quantity.MilliValue()), every other resource in its Quantity.Value(), i.e.
// bytes for "memory" and the plain count for extended resources (Koordinator's
// "kubernetes.io/batch-cpu" is itself a count of milli-cores).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace qrm::cluster::loadaware {

// Wall-clock instants with Go's time.Time precision (nanoseconds).
using TimePoint = std::chrono::time_point<std::chrono::system_clock, std::chrono::nanoseconds>;

// corev1.ResourceList after conversion to the units above: resource name -> quantity.
using ResourceList = std::map<std::string, int64_t, std::less<>>;

// The resource names the plugin treats specially (corev1 and apis/extension/resource.go).
inline constexpr std::string_view kCpu = "cpu";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kBatchCpu = "kubernetes.io/batch-cpu";
inline constexpr std::string_view kBatchMemory = "kubernetes.io/batch-memory";
inline constexpr std::string_view kMidCpu = "kubernetes.io/mid-cpu";
inline constexpr std::string_view kMidMemory = "kubernetes.io/mid-memory";

// The largest quantity accepted anywhere (2^50: 1 PiB of memory, 10^12 cores in milli-cores).
// Koordinator has no bound; ours keeps every sum of a node far from int64 overflow, which would
// turn a loaded node into an idle-looking one, and keeps quantities exact as doubles, so the
// usage percentages round exactly as Go rounds them.
inline constexpr int64_t kMaxQuantity = int64_t{1} << 50;

// The largest number of seconds that Go's time.Duration(n) * time.Second holds without
// wrapping; Validate refuses durations beyond it instead of reproducing the wrap.
inline constexpr int64_t kMaxDurationSeconds = 9'223'372'036;

}  // namespace qrm::cluster::loadaware
