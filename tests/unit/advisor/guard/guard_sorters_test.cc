// The guard's pod orders against hand-built pods: each key alone, the default chains, and the
// name tie-break that makes an order total.
#include "advisor/guard/guard_sorters.h"

#include <catch2/catch.hpp>

#include "advisor/guard/guard_metrics.h"

namespace qrm::advisor::guard {
namespace {

GuardCandidate Pod(const std::string& name, CandidateClass cls = CandidateClass::kReclaimed,
                   int32_t priority = 0) {
  GuardCandidate c;
  c.pod_uid = "uid-" + name;
  c.pod_namespace = "ns";
  c.pod_name = name;
  c.cls = cls;
  c.priority = priority;
  return c;
}

std::string Names(const std::vector<GuardCandidate>& pods) {
  std::string out;
  for (const auto& p : pods) out += (out.empty() ? "" : " ") + p.pod_name;
  return out;
}

TEST_CASE("classAndPriority: reclaimed before shared then the lower priority", "[advisor][guard]") {
  const auto shared_low = Pod("shared-low", CandidateClass::kShared, -10);
  const auto reclaimed_high = Pod("reclaimed-high", CandidateClass::kReclaimed, 1000);
  const auto reclaimed_low = Pod("reclaimed-low", CandidateClass::kReclaimed, 5);
  CHECK(ClassAndPriority(reclaimed_high, shared_low) < 0);
  CHECK(ClassAndPriority(reclaimed_low, reclaimed_high) < 0);
  CHECK(ClassAndPriority(reclaimed_low, reclaimed_low) == 0);
  std::vector<GuardCandidate> pods = {shared_low, reclaimed_high, reclaimed_low};
  GeneralOrder().Sort(pods);
  CHECK(Names(pods) == "reclaimed-low reclaimed-high shared-low");
}

TEST_CASE("runningTime: the pod that has run for less gives way first", "[advisor][guard]") {
  auto old_pod = Pod("old"), young = Pod("young");
  old_pod.start_time_s = 1000;
  young.start_time_s = 5000;
  CHECK(RunningTime(young, old_pod) < 0);
  CHECK(RunningTime(old_pod, young) > 0);
  std::vector<GuardCandidate> pods = {old_pod, young};
  GeneralOrder().Sort(pods);
  CHECK(Names(pods) == "young old");
}

TEST_CASE("cpuUsage and memoryUsage: the higher first and the unsampled last", "[advisor][guard]") {
  auto a = Pod("a"), b = Pod("b"), unsampled = Pod("c");
  a.cpu_usage = 0.5;
  b.cpu_usage = 2.0;
  a.memory_usage = 3e9;
  b.memory_usage = 1e9;
  CHECK(CpuUsage(b, a) < 0);
  CHECK(CpuUsage(unsampled, a) > 0);
  CHECK(MemoryUsage(a, b) < 0);
  CHECK(MemoryUsage(unsampled, b) > 0);
  std::vector<GuardCandidate> pods = {unsampled, a, b};
  CpuUsageOrder().Sort(pods);
  CHECK(Names(pods) == "b a c");
  MemoryUsageOrder().Sort(pods);
  CHECK(Names(pods) == "a b c");
}

TEST_CASE("extCpuUsage: pods using extended CPU first and the higher ratio first",
          "[advisor][guard]") {
  auto none = Pod("none"), half = Pod("half"), full = Pod("full");
  half.ext_cpu_usage = 1;
  half.ext_cpu_limit = 2;
  full.ext_cpu_usage = 2;
  full.ext_cpu_limit = 2;
  CHECK(ExtCpuUsage(half, none) < 0);
  CHECK(ExtCpuUsage(full, half) < 0);
  // Equal CPU usage: the extended CPU decides, before running time.
  for (auto* p : {&none, &half, &full}) p->cpu_usage = 1;
  none.start_time_s = 9000;  // the youngest would go first on running time alone
  std::vector<GuardCandidate> pods = {none, half, full};
  CpuUsageOrder().Sort(pods);
  CHECK(Names(pods) == "full half none");
}

TEST_CASE("pods no key tells apart are ordered by namespace and name", "[advisor][guard]") {
  std::vector<GuardCandidate> pods = {Pod("c"), Pod("a"), Pod("b")};
  CpuUsageOrder().Sort(pods);
  CHECK(Names(pods) == "a b c");
  CHECK_FALSE(GeneralOrder().Before(pods[0], pods[0]));
}

TEST_CASE("the registry's metrics and their attributes", "[advisor][guard]") {
  const GuardMetric* cpu = FindMetric("cpu_total_usage");
  REQUIRE(cpu != nullptr);
  CHECK(cpu->throttleable);
  CHECK(cpu->throttle_quantified);
  CHECK(cpu->evict_quantified);
  const GuardMetric* memory = FindMetric("memory_total_usage");
  REQUIRE(memory != nullptr);
  CHECK_FALSE(memory->throttleable);
  CHECK(memory->evict_quantified);
  CHECK(memory->action_priority > cpu->action_priority);
  CHECK(FindMetric("cpu_total_utilization") == nullptr);
  auto pod = Pod("p");
  pod.memory_usage = 5;
  CHECK(memory->pod_usage(pod) == 5);
  CHECK_FALSE(cpu->pod_usage(pod).has_value());
}

}  // namespace
}  // namespace qrm::advisor::guard
