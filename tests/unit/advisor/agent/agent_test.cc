// The advisor's loop on a fake node: what it samples, what it tells the models, the pool
// decisions it writes, and what it does when a source fails.
#include "advisor/agent/agent.h"

#include <catch2/catch.hpp>

#include "advisor/agent/advisor_service.h"
#include "advisor/pools/pool_control_file.h"
#include "tests/unit/advisor/agent/fake_node.h"

namespace qrm::advisor {
namespace {

constexpr int64_t kT0 = 1'800'000'000;  // a whole minute
constexpr int64_t kSecond = 1'000'000'000;

struct Node {
  fake::Tree tree;
  std::vector<TrackedContainer> running;
  HostView view;
  fake::Runtime* runtime = nullptr;
  std::shared_ptr<bool> host_fails;
  std::unique_ptr<Agent> agent;
  std::map<std::string, double> cpu_seconds;  // per cgroup path

  Node(const std::string& pool_model, const std::string& control_file) {
    running = {fake::Container("web", "app"), fake::Container("batch", "job")};
    view.allocatable_cpus = 4;
    view.containers["web-uid/app"] = {"web", "default", "shared_cores", "0"};
    view.containers["batch-uid/job"] = {"batch", "default", "reclaimed_cores", "1-3"};
    AgentOptions o;
    o.sampler = {tree.cgroup_root(), tree.procfs_root()};
    o.step_s = 60;
    o.inventory_period_s = 1;
    o.pools.control_file = control_file;
    o.pools.sizer.min_shared_cpus = 1;
    o.pools.sizer.min_reclaimed_cpus = 1;
    o.pools.sizer.shrink_interval_s = 30;
    o.pools.period_s = 1;
    auto predictors = Predictors::Make({"koordinator", pool_model});
    REQUIRE(predictors.ok());
    auto rt = std::make_unique<fake::Runtime>(&running);
    runtime = rt.get();
    auto host = std::make_unique<fake::Host>(&view);
    host_fails = host->fail;
    agent = std::make_unique<Agent>(o, std::move(*predictors), std::move(host), std::move(rt));
  }

  // Advances every counter by one second of the given rates, then ticks at kT0 + t.
  void Tick(int64_t t, double web_cores, double batch_cores, double node_cores) {
    const std::map<std::string, double> rate = {{"/kubepods/podweb/app", web_cores},
                                                {"/kubepods/podbatch/job", batch_cores}};
    for (const auto& [path, r] : rate) {
      cpu_seconds[path] += r;
      tree.SetContainer(path, cpu_seconds[path],
                        path.find("web") != std::string::npos ? 100 << 20 : 50 << 20);
    }
    node_busy += node_cores;
    tree.SetNode(node_busy, 4.0 * static_cast<double>(t + 1), 1ULL << 30);
    agent->Tick(kT0 + t, (t + 1) * kSecond);
  }
  double node_busy = 0;
};

v1::ContainerUsage Find(const v1::GetUsageResponse& r, const std::string& pod) {
  for (const auto& p : r.pods()) {
    if (p.name() == pod) return p.containers(0);
  }
  FAIL("no pod " << pod);
  return {};
}

TEST_CASE("the agent samples each container's cores and working set, and system usage") {
  Node n("none", "");
  for (int64_t t = 0; t < 5; ++t) n.Tick(t, 1.5, 0.25, 2.0);
  const v1::GetUsageResponse r = BuildUsage(*n.agent, {}, kT0 + 4);
  CHECK(Find(r, "web").cpu().latest() == Approx(1.5));
  CHECK(Find(r, "web").memory().latest() == Approx(100 << 20));
  CHECK(Find(r, "batch").cpu().latest() == Approx(0.25));
  CHECK(r.node().cpu().latest() == Approx(2.0));
  CHECK(r.node().system_cpu().latest() == Approx(0.25));  // 2.0 - 1.5 - 0.25
  CHECK(r.node().cpu_capacity() == 4);
  CHECK(r.status().containers_sampled() == 2);
  v1::GetUsageRequest window;
  window.set_window_seconds(300);
  window.set_pod("default/web");
  const v1::GetUsageResponse w = BuildUsage(*n.agent, window, kT0 + 4);
  REQUIRE(w.pods_size() == 1);
  CHECK(Find(w, "web").cpu().samples() == 4);  // the first reading gives no rate
  CHECK(Find(w, "web").cpu().avg() == Approx(1.5));
  CHECK(w.pods(0).qos_level() == "shared_cores");
  CHECK(w.pods(0).priority_class() == "prod");
}

TEST_CASE("a vanished cgroup is skipped and counted, never a crash or a negative sample") {
  Node n("none", "");
  n.Tick(0, 1, 1, 2);
  n.Tick(1, 1, 1, 2);
  n.tree.RemoveContainer("/kubepods/podbatch/job");
  n.agent->Tick(kT0 + 2, 3 * kSecond);
  const auto r = BuildUsage(*n.agent, {}, kT0 + 2);
  CHECK(r.status().containers_sampled() == 1);
  CHECK(r.status().containers_skipped() == 1);
  // A counter that went back (the cgroup recreated) gives no rate, then rates again.
  n.cpu_seconds["/kubepods/podbatch/job"] = 0;
  n.Tick(3, 1, 0.5, 2);
  n.Tick(4, 1, 0.5, 2);
  CHECK(Find(BuildUsage(*n.agent, {}, kT0 + 4), "batch").cpu().latest() == Approx(0.5));
}

TEST_CASE("a minute of ticks becomes one step the node models observe") {
  Node n("none", "");
  for (int64_t t = 0; t < 61; ++t) n.Tick(t, 1.0, 0.5, 2.0);
  const v1::GetPredictionResponse p = BuildPrediction(*n.agent, kT0 + 60, "");
  REQUIRE(p.resources_size() == 2);
  CHECK(p.resources(0).resource() == "cpu");
  CHECK(p.resources(0).steps_observed() == 1);
  CHECK(p.resources(0).known());
  CHECK(p.resources(0).capacity() == 4);
  // Koordinator: system and Prod (web) are protected, batch is not; a pod younger than 24 h
  // counts its request (0 here).
  CHECK(p.resources(0).peak() > 0);
  CHECK(p.resources(0).peak() < 4);
}

TEST_CASE("the pool controller writes the shared size when the shared container burns") {
  fake::Tree files;
  const std::string control = files.File("pools.json");
  Node n("none", control);
  for (int64_t t = 0; t < 3; ++t) n.Tick(t, 0.2, 0.2, 0.5);
  auto report = n.agent->Read([](auto&&, auto&&, const PoolReport& r, auto&&) { return r; });
  CHECK(report.reason == "steady");  // 0.25 cores: one CPU, which the shared pool has
  CHECK(ReadPoolControl(control).status().code() == StatusCode::kNotFound);
  // web burns 2.5 cores: 3.1 needed, but the reclaimed pool keeps its one CPU.
  for (int64_t t = 3; t < 15; ++t) n.Tick(t, 2.5, 0.2, 3.0);
  auto written = ReadPoolControl(control);
  REQUIRE(written.ok());
  CHECK(written->shared == 3);
  report = n.agent->Read([](auto&&, auto&&, const PoolReport& r, auto&&) { return r; });
  CHECK(report.reclaimed == 1);
  CHECK(report.need_cores == Approx(2.5 * 1.25));
}

TEST_CASE("qrm-host unreachable: the pools stay as they are") {
  fake::Tree files;
  const std::string control = files.File("pools.json");
  Node n("none", control);
  *n.host_fails = true;
  for (int64_t t = 0; t < 20; ++t) n.Tick(t, 2.5, 0.2, 3.0);
  CHECK(ReadPoolControl(control).status().code() == StatusCode::kNotFound);
  auto report = n.agent->Read([](auto&&, auto&&, const PoolReport& r, auto&&) { return r; });
  CHECK(report.reason == "stale");
  const auto usage = BuildUsage(*n.agent, {}, kT0 + 19);
  CHECK(usage.status().host_error().find("qrm-host down") != std::string::npos);
  CHECK(usage.pods_size() == 2);  // still sampled, with no QoS level
  CHECK(usage.pods(0).qos_level().empty());
}

TEST_CASE("a pool model that has not observed a step keeps the pools waiting") {
  fake::Tree files;
  const std::string control = files.File("pools.json");
  Node n("koordinator", control);
  for (int64_t t = 0; t < 20; ++t) n.Tick(t, 2.5, 0.2, 3.0);
  auto report = n.agent->Read([](auto&&, auto&&, const PoolReport& r, auto&&) { return r; });
  CHECK(report.reason == "waiting");
  CHECK(ReadPoolControl(control).status().code() == StatusCode::kNotFound);
  for (int64_t t = 20; t < 62; ++t) n.Tick(t, 2.5, 0.2, 3.0);
  CHECK(ReadPoolControl(control).ok());
}

}  // namespace
}  // namespace qrm::advisor

namespace qrm::advisor {
namespace {

TEST_CASE("the runtime unreachable: the pools stay as they are") {
  fake::Tree files;
  const std::string control = files.File("pools.json");
  Node n("none", control);
  n.runtime->fail = true;  // no container list: the shared pool's usage is unknown
  for (int64_t t = 0; t < 20; ++t) n.Tick(t, 2.5, 0.2, 3.0);
  auto report = n.agent->Read([](auto&&, auto&&, const PoolReport& r, auto&&) { return r; });
  CHECK(report.reason == "stale");
  CHECK(ReadPoolControl(control).status().code() == StatusCode::kNotFound);
}

TEST_CASE("a shared container whose cgroup cannot be read leaves the pools alone") {
  fake::Tree files;
  const std::string control = files.File("pools.json");
  Node n("none", control);
  n.running[0].cgroup_path = "/kubepods/podweb/elsewhere";  // never written: unreadable
  for (int64_t t = 0; t < 20; ++t) n.Tick(t, 2.5, 0.2, 3.0);
  auto report = n.agent->Read([](auto&&, auto&&, const PoolReport& r, auto&&) { return r; });
  CHECK(report.reason == "stale");  // no recent usage: not zero
  CHECK(ReadPoolControl(control).status().code() == StatusCode::kNotFound);
}

TEST_CASE("the pool controller decides from the size in force when the plugin moved it") {
  fake::Tree files;
  const std::string control = files.File("pools.json");
  Node n("none", control);
  for (int64_t t = 0; t < 5; ++t) n.Tick(t, 2.5, 0.2, 3.0);
  REQUIRE(ReadPoolControl(control)->shared == 3);
  std::filesystem::remove(control);
  // A dedicated admission took CPUs from the shared pool: the allocations show one CPU again
  // (the fake host never showed more), so the advisor writes its size again.
  for (int64_t t = 5; t < 8; ++t) n.Tick(t, 2.5, 0.2, 3.0);
  auto written = ReadPoolControl(control);
  REQUIRE(written.ok());
  CHECK(written->shared == 3);
}

}  // namespace
}  // namespace qrm::advisor
