#include "advisor/agent/step_accumulator.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

TickUsage Tick(int64_t time, double node, std::vector<std::optional<double>> cpus) {
  TickUsage t;
  t.time = time;
  t.node_cpu = node;
  t.node_memory = 1000;
  t.cpu_capacity = 8;
  t.memory_capacity = 4000;
  for (size_t i = 0; i < cpus.size(); ++i) t.containers.push_back({i, cpus[i], 100});
  return t;
}

std::vector<TrackedContainer> Containers() {
  std::vector<TrackedContainer> c(3);
  c[0].pod_uid = "a", c[0].name = "x", c[0].qos_level = "shared_cores", c[0].cpu_request = 1;
  c[1].pod_uid = "a", c[1].name = "y", c[1].qos_level = "shared_cores", c[1].cpu_request = 0.5;
  c[2].pod_uid = "b", c[2].name = "z", c[2].qos_level = "reclaimed_cores";
  for (auto& x : c) x.priority = PriorityOfQosLevel(x.qos_level);
  return c;
}

TEST_CASE("ticks of a step give its p90 and max per series; pods sum their containers") {
  StepAccumulator acc(10);
  const auto containers = Containers();
  for (int i = 0; i < 10; ++i) {
    // node 1..10; pod a = 0.1 i + 0.2; pod b 0.5; container y has no rate at the first tick
    auto step =
        acc.Add(Tick(100 + i, i + 1.0, {0.1 * i, i == 0 ? std::nullopt : std::optional(0.2), 0.5}),
                containers, 6);
    CHECK_FALSE(step.has_value());
  }
  auto step = acc.Add(Tick(110, 1, {0, 0, 0}), containers, 6);
  REQUIRE(step.has_value());
  CHECK(step->cpu.time == 110);
  CHECK(step->cpu.node == 9);  // p90 of 1..10, nearest rank
  CHECK(step->cpu.node_max == 10);
  CHECK(step->cpu.capacity == 8);
  REQUIRE(step->cpu.pods.size() == 2);
  const PodUsage& a = step->cpu.pods[0];
  CHECK(a.uid == "a");
  CHECK(a.request == 1.5);
  CHECK(a.usage_max == Approx(1.1));  // 0.9 + 0.2
  CHECK(a.usage == Approx(1.0));
  CHECK(a.started == 100);
  CHECK(step->cpu.pods[1].priority == PriorityClass::kBatch);
  CHECK(step->memory.pods[0].usage == 200);
  REQUIRE(step->pool.has_value());
  CHECK(step->pool->capacity == 6);
  CHECK(step->pool->node_max == Approx(1.1));  // the shared containers, not the batch pod
  CHECK(step->pool->pods.empty());
}

TEST_CASE("a tick from before the open step is dropped; a pod keeps its age across steps") {
  StepAccumulator acc(10);
  const auto containers = Containers();
  CHECK_FALSE(acc.Add(Tick(105, 1, {1, 1, 1}), containers, 0));
  CHECK_FALSE(acc.Add(Tick(99, 100, {1, 1, 1}), containers, 0));  // the clock stepped back
  auto step = acc.Add(Tick(112, 1, {1, 1, 1}), containers, 0);
  REQUIRE(step.has_value());
  CHECK(step->cpu.node_max == 1);
  CHECK_FALSE(step->pool.has_value());  // no pool CPUs known
  step = acc.Add(Tick(125, 1, {1, 1, 1}), containers, 0);
  REQUIRE(step.has_value());
  CHECK(step->cpu.pods[0].started == 105);
}

}  // namespace
}  // namespace qrm::advisor
