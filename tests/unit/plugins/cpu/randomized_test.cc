// Randomised admissions and removals on several machine shapes (fixed seed). After every step
// the plugin's state is checked against invariants, and every hint list against an independent
// enumeration computed from the plugin's public state.
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

constexpr int kKeepFree = 4 + 1;  // the configured reclaimed pool + one shared CPU

struct Kind {
  const char* role;  // from kDocRoles; "" = katalyst annotations below
  std::map<std::string, std::string> annotations;
};

const std::vector<Kind> kKinds = {
    {"online-micro_service", {}},
    {"", {}},  // no annotation at all: shared_cores
    {"ETL", {}},
    {"system", {}},
    {"batch", {}},
    {"", {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"}}},
    {"storage-service", {}},
    {"reranker", {}},
    {"numa-enhancement", {}},
    {"storage-exclusive", {}},
    {"",
     {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
      {"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding":"true"})"}}},
};

class Oracle {
 public:
  Oracle(const CpuPlugin& plugin, const qos::RoleTable& roles)
      : plugin_(plugin), roles_(roles), layout_(plugin.layout()) {}

  // The hint list the rules in hints.h call for, as HintText would print it.
  std::string ExpectedHints(const CpuState& state, int cpus, const qos::QosRequirement& qos) {
    const CpuSet allocatable = layout_.online().Difference(plugin_.reserved());
    CpuSet dedicated;  // recounted: the state's own index is under test
    for (const auto& [uid, containers] : state.pods()) {
      for (const auto& [name, c] : containers) {
        if (c.dedicated()) dedicated = dedicated.Union(c.cpuset);
      }
    }
    const CpuSet free = allocatable.Difference(dedicated);
    std::vector<std::pair<NumaMask, bool>> hints;
    int min_capacity_width = static_cast<int>(layout_.cpu_nodes().size());
    for (NumaMask set : NodeSets()) {
      const CpuSet cpus_there = layout_.MaskCpus(set);
      if (cpus_there.Size() >= cpus) min_capacity_width = std::min(min_capacity_width, set.Count());
      const CpuSet free_there = cpus_there.Intersection(free);
      int takes = cpus;
      bool ok = free_there.Size() >= cpus;
      if (qos.numa_bound()) {
        if (qos.numa_exclusive) {
          takes = cpus_there.Intersection(allocatable).Size();
          ok = ok && free_there == cpus_there.Intersection(allocatable);
        }
        for (const auto& [uid, containers] : state.pods()) {
          for (const auto& [name, c] : containers) {
            if (!c.dedicated() || !c.numa_bound() || c.numa_nodes.And(set).empty()) continue;
            if (c.numa_exclusive || qos.numa_exclusive || roles_.AntiAffine(qos.role, c.role)) {
              ok = false;
            }
          }
        }
      }
      ok = ok && free.Size() - takes >= kKeepFree;
      if (ok) hints.push_back({set, false});
    }
    const int narrowest = hints.empty() ? 0 : hints.front().first.Count();
    std::string text;
    for (auto& [set, preferred] : hints) {
      preferred = set.Count() == (qos.numa_bound() ? narrowest : min_capacity_width);
      text += (text.empty() ? "" : " ") + set.ToString() + (preferred ? "*" : "");
    }
    return text;
  }

 private:
  // Every set of NUMA nodes with CPUs, narrowest first, then in lexicographic order.
  std::vector<NumaMask> NodeSets() const {
    const std::vector<int>& nodes = layout_.cpu_nodes();
    const int n = static_cast<int>(nodes.size());
    std::vector<NumaMask> sets;
    for (int width = 1; width <= n; ++width) {
      std::vector<bool> pick(n, false);
      std::fill(pick.begin(), pick.begin() + width, true);
      do {
        NumaMask mask;
        for (int i = 0; i < n; ++i) {
          if (pick[i]) mask = mask.With(nodes[i]);
        }
        sets.push_back(mask);
      } while (std::prev_permutation(pick.begin(), pick.end()));
    }
    return sets;
  }

  const CpuPlugin& plugin_;
  const qos::RoleTable& roles_;
  const CpuLayout& layout_;
};

void CheckInvariants(const CpuPlugin& plugin, const qos::RoleTable& roles) {
  const CpuState state = plugin.state();
  const CpuLayout& layout = plugin.layout();
  const CpuPools& pools = state.pools;
  const CpuSet allocatable = layout.online().Difference(plugin.reserved());
  // The pools partition the machine; the reclaimed pool has its size, shared at least one CPU.
  CHECK(pools.reserved == plugin.reserved());
  CHECK(pools.reserved.Union(pools.dedicated).Union(pools.reclaimed).Union(pools.shared) ==
        layout.online());
  CHECK(pools.reserved.Size() + pools.dedicated.Size() + pools.reclaimed.Size() +
            pools.shared.Size() ==
        layout.online().Size());
  CHECK(pools.reclaimed.Size() == 4);
  CHECK(pools.shared.Size() >= 1);

  CpuSet dedicated;
  std::vector<std::pair<std::string, const ContainerAllocation*>> bound;
  std::set<CpuState::ContainerKey> bound_keys;
  int count = 0;
  bool any_reclaimed = false;
  // What each pool container must be reported on: its pool (the NUMA-bound shared ones are
  // checked against their nodes below).
  std::map<CpuState::ContainerKey, CpuSet> pool_of;
  for (const auto& [uid, containers] : state.pods()) {
    for (const auto& [name, c] : containers) {
      ++count;
      any_reclaimed = any_reclaimed || c.level == qos::QosLevel::kReclaimed;
      INFO(uid << "/" << name << " cpuset " << c.cpuset << " level " << qos::QosLevelName(c.level));
      switch (c.level) {
        case qos::QosLevel::kDedicated: {
          CHECK_FALSE(c.cpuset.Overlaps(dedicated));  // never two owners
          CHECK(c.cpuset.IsSubsetOf(allocatable));    // never reserved
          dedicated = dedicated.Union(c.cpuset);
          if (c.numa_exclusive) {
            CHECK(c.cpuset == layout.MaskCpus(c.numa_nodes).Intersection(allocatable));
          } else {
            CHECK(c.cpuset.Size() == (c.request_milli + 999) / 1000);
          }
          if (c.numa_bound()) {
            CHECK(c.cpuset.IsSubsetOf(layout.MaskCpus(c.numa_nodes)));
            bound.emplace_back(c.role, &c);
            bound_keys.emplace(uid, name);
          }
          break;
        }
        // Pool containers hold no CPUs of their own: they run on their pool.
        case qos::QosLevel::kShared:
          CHECK(c.cpuset.Empty());
          if (!c.numa_bound()) pool_of[{uid, name}] = pools.shared;
          break;
        case qos::QosLevel::kReclaimed:
          CHECK(c.cpuset.Empty());
          pool_of[{uid, name}] = pools.reclaimed;
          break;
        case qos::QosLevel::kSystem:
          CHECK(c.cpuset.Empty());
          pool_of[{uid, name}] = pools.reserved;
          break;
      }
    }
  }
  CHECK(dedicated == pools.dedicated);
  // The state's indexes agree with a recount.
  CHECK(state.DedicatedCpus() == dedicated);
  CHECK(state.ContainerCount() == count);
  CHECK(state.HasReclaimed() == any_reclaimed);
  CHECK(state.BoundDedicated() == bound_keys);
  // NUMA-bound containers sharing a node: neither exclusive, roles not anti-affine.
  for (size_t i = 0; i < bound.size(); ++i) {
    for (size_t j = i + 1; j < bound.size(); ++j) {
      const auto* a = bound[i].second;
      const auto* b = bound[j].second;
      if (a->numa_nodes.And(b->numa_nodes).empty()) continue;
      CHECK_FALSE(a->numa_exclusive);
      CHECK_FALSE(b->numa_exclusive);
      CHECK_FALSE(roles.AntiAffine(a->role, b->role));
    }
  }
  // What the host sees is the state.
  auto reported = const_cast<CpuPlugin&>(plugin).GetResourcesAllocation();
  REQUIRE(reported.ok());
  int reported_count = 0;
  for (const auto& [uid, containers] : reported->pod_resources()) {
    for (const auto& [name, alloc] : containers.container_resources()) {
      ++reported_count;
      const ContainerAllocation* c = state.Find(uid, name);
      REQUIRE(c != nullptr);
      const std::string result = alloc.resource_allocation().at("cpu").allocation_result();
      INFO(uid << "/" << name << " reported " << result);
      if (c->dedicated()) {
        CHECK(result == c->cpuset.ToString());
      } else if (const auto pool = pool_of.find({uid, name}); pool != pool_of.end()) {
        CHECK(result == pool->second.ToString());
      } else {
        // NUMA-bound shared: the shared CPUs of its nodes, or the whole pool if none are left.
        const CpuSet local = pools.shared.Intersection(layout.MaskCpus(c->numa_nodes));
        CHECK(result == (local.Empty() ? pools.shared : local).ToString());
      }
    }
  }
  CHECK(reported_count == state.ContainerCount());
}

void RunRandomised(const std::string& shape, uint32_t seed, int steps) {
  const auto topology = FakeTopology(shape);
  CpuPluginConfig config;
  config.reserved_cpu_count = 2;
  config.reclaimed_pool_size = 4;  // kKeepFree
  auto plugin = MakePlugin(topology, config);
  auto roles = qos::RoleTable::Parse(kDocRoles);
  REQUIRE(roles.ok());
  Oracle oracle(*plugin, *roles);
  const CpuPools initial = plugin->pools();
  const int node_cpus = topology.nodes.front().cpus.Size();
  const int allocatable = plugin->layout().online().Difference(plugin->reserved()).Size();

  std::mt19937 rng(seed);
  std::vector<std::string> live;
  int admitted = 0, refused = 0, removed = 0;
  for (int step = 0; step < steps; ++step) {
    INFO("shape " << shape << " step " << step);
    if (!live.empty() && rng() % 10 < 4) {
      const size_t i = rng() % live.size();
      REQUIRE(plugin->RemovePod(live[i]).ok());
      live.erase(live.begin() + static_cast<long>(i));
      ++removed;
    } else {
      const Kind& kind = kKinds[rng() % kKinds.size()];
      // Mostly small requests, sometimes fractional, sometimes a node's worth or more.
      double cpus = 1 + rng() % (node_cpus / 3);
      if (rng() % 4 == 0) cpus -= 0.5;
      if (rng() % 10 == 0) cpus = std::min(node_cpus + static_cast<int>(rng() % 8), allocatable);
      const std::string uid = "pod" + std::to_string(step);
      auto req = Request(uid, kind.role, cpus, kind.annotations);
      auto qos = qos::ResolveQos(req, *roles);
      REQUIRE(qos.ok());
      const std::string hints = Hints(*plugin, req);
      if (!qos->dedicated()) {
        CHECK(hints == "absent");
        AllocateOk(*plugin, req);
        live.push_back(uid);
        ++admitted;
      } else {
        const int whole = static_cast<int>(std::ceil(cpus));
        CHECK(hints == oracle.ExpectedHints(plugin->state(), whole, *qos));
        auto listed = plugin->GetTopologyHints(req);
        REQUIRE(listed.ok());
        const auto& list = listed->resource_hints().at("cpu");
        if (list.hints_size() == 0) {
          // Cannot be satisfied: Allocate agrees and changes nothing.
          const CpuState before = plugin->state();
          auto r = plugin->Allocate(req);
          REQUIRE_FALSE(r.ok());
          CHECK(r.status().code() == StatusCode::kResourceExhausted);
          CHECK(plugin->state() == before);
          ++refused;
        } else {
          // Any hint we offered must be accepted.
          const auto& hint = list.hints(static_cast<int>(rng() % list.hints_size()));
          std::vector<int> nodes(hint.nodes().begin(), hint.nodes().end());
          AllocateOk(*plugin, WithHint(req, nodes, hint.preferred()));
          live.push_back(uid);
          ++admitted;
        }
      }
    }
    CheckInvariants(*plugin, *roles);
  }
  // Each path was exercised.
  CHECK(admitted > steps / 4);
  CHECK(removed > steps / 10);
  CHECK(refused > 0);

  // Releasing everything gives every CPU back.
  for (const std::string& uid : live) REQUIRE(plugin->RemovePod(uid).ok());
  CHECK(plugin->state().ContainerCount() == 0);
  CHECK(plugin->pools() == initial);
  const int all = allocatable - kKeepFree;
  const auto everything = AllocateOk(
      *plugin, Request("all", "", all, {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"}}));
  CHECK(everything.allocated_quantity() == all);
}

TEST_CASE("randomised admissions never overlap and hints are exact: 4x32smt", "[cpu][random]") {
  RunRandomised("4x32smt", 20240601, 400);
}

TEST_CASE("randomised admissions never overlap and hints are exact: nosmt", "[cpu][random]") {
  RunRandomised("nosmt", 7, 300);
}

TEST_CASE("randomised admissions never overlap and hints are exact: memonly", "[cpu][random]") {
  RunRandomised("memonly", 99, 300);
}

TEST_CASE("randomised admissions never overlap and hints are exact: snc4, intel96, snc4x2off",
          "[cpu][random]") {
  RunRandomised("snc4", 4, 300);
  RunRandomised("intel96", 48, 300);
  RunRandomised("snc4x2off", 38, 300);
}

}  // namespace
}  // namespace qrm::cpu::testing
