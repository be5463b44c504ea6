// TakeExclusiveCpus against a reference of the kubelet's takeByTopologyNUMAPacked
// (pkg/kubelet/cm/cpumanager/cpu_assignment.go), written here independently from the
// kubelet's documented order: on random free sets and request sizes, the plugin's CPUs never
// span more NUMA nodes than the reference's, nor more sockets on as many nodes.
#include <random>
#include <set>

#include "plugins/cpu/exclusive_cpus.h"
#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

// The kubelet's packed order, built from the discovered topology (not from CpuLayout):
//   1. whole NUMA nodes and sockets while the request needs at least one of them (NUMA nodes
//      first when there are no fewer sockets than nodes, sockets first otherwise);
//   2. whole free cores while it needs at least a core;
//   3. single CPUs.
// Every list is ordered as the kubelet sorts it: the upper level by ascending free CPUs
// (then id), each lower level inside it the same way. One deliberate difference: a core is
// whole when all its threads_per_core threads are free (the kubelet divides online CPUs by
// cores, which goes wrong with offline CPUs).
class KubeletPacked {
 public:
  explicit KubeletPacked(const machine::MachineTopology& topo) {
    std::map<machine::CoreKey, int> core_index;
    for (const machine::CpuInfo& cpu : topo.cpus) {
      const machine::CoreKey key{cpu.package_id, cpu.die_id, cpu.core_id};
      auto [it, added] = core_index.try_emplace(key, static_cast<int>(cores_.size()));
      if (added) cores_.emplace_back();
      cores_[it->second].Add(cpu.id);
      node_cpus_[cpu.node].Add(cpu.id);
      socket_cpus_[cpu.package_id].Add(cpu.id);
      sockets_of_node_[cpu.node].insert(cpu.package_id);
      nodes_of_socket_[cpu.package_id].insert(cpu.node);
      core_node_[it->second] = cpu.node;
      core_socket_[it->second] = cpu.package_id;
    }
    for (const CpuSet& core : cores_) cpus_per_core_ = std::max(cpus_per_core_, core.Size());
    numa_first_ = socket_cpus_.size() >= node_cpus_.size();
  }

  CpuSet Take(const CpuSet& available, int count) const {
    Run run{*this, available, {}, count};
    if (numa_first_) {
      run.TakeWhole(run.Nodes(), node_cpus_);
      run.TakeWhole(run.Sockets(), socket_cpus_);
    } else {
      run.TakeWhole(run.Sockets(), socket_cpus_);
      run.TakeWhole(run.Nodes(), node_cpus_);
    }
    run.TakeCores();
    run.TakeSingles();
    return run.result;
  }

 private:
  struct Run {
    const KubeletPacked& k;
    CpuSet free;
    CpuSet result;
    int need;

    int Free(const CpuSet& cpus) const { return cpus.Intersection(free).Size(); }
    void Take(const CpuSet& cpus) {
      result = result.Union(cpus);
      free = free.Difference(cpus);
      need -= cpus.Size();
    }
    // `ids` with free CPUs, by ascending free CPUs, then id.
    template <typename Cpus>
    std::vector<int> Sorted(const std::vector<int>& ids, const Cpus& cpus_of) const {
      std::vector<std::pair<int, int>> keyed;
      for (int id : ids) {
        if (Free(cpus_of(id)) > 0) keyed.emplace_back(Free(cpus_of(id)), id);
      }
      std::sort(keyed.begin(), keyed.end());
      std::vector<int> out;
      for (const auto& [n, id] : keyed) out.push_back(id);
      return out;
    }
    std::vector<int> Ids(const std::map<int, CpuSet>& groups) const {
      std::vector<int> ids;
      for (const auto& [id, cpus] : groups) ids.push_back(id);
      return ids;
    }
    std::vector<int> Nodes() const {
      auto node = [&](int id) { return k.node_cpus_.at(id); };
      if (k.numa_first_) return Sorted(Ids(k.node_cpus_), node);
      std::vector<int> out;
      for (int socket : Sockets()) {
        const std::set<int>& in = k.nodes_of_socket_.at(socket);
        for (int n : Sorted(std::vector<int>(in.begin(), in.end()), node)) out.push_back(n);
      }
      return out;
    }
    std::vector<int> Sockets() const {
      auto socket = [&](int id) { return k.socket_cpus_.at(id); };
      if (!k.numa_first_) return Sorted(Ids(k.socket_cpus_), socket);
      std::vector<int> out;
      for (int node : Nodes()) {
        const std::set<int>& in = k.sockets_of_node_.at(node);
        for (int s : Sorted(std::vector<int>(in.begin(), in.end()), socket)) {
          if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
        }
      }
      return out;
    }
    // Core indices, grouped under the lower of the two levels, each group by free CPUs.
    std::vector<int> Cores() const {
      std::vector<int> out;
      const std::vector<int> groups = k.numa_first_ ? Sockets() : Nodes();
      for (int group : groups) {
        std::vector<std::pair<int, int>> keyed;  // free CPUs, lowest CPU id (the core id)
        std::map<int, int> index_of_first;
        for (size_t i = 0; i < k.cores_.size(); ++i) {
          const int where = k.numa_first_ ? k.core_socket_.at(i) : k.core_node_.at(i);
          if (where != group || Free(k.cores_[i]) == 0) continue;
          keyed.emplace_back(Free(k.cores_[i]), *k.cores_[i].First());
          index_of_first[*k.cores_[i].First()] = static_cast<int>(i);
        }
        std::sort(keyed.begin(), keyed.end());
        for (const auto& [n, first] : keyed) out.push_back(index_of_first.at(first));
      }
      return out;
    }
    void TakeWhole(const std::vector<int>& order, const std::map<int, CpuSet>& groups) {
      for (int id : order) {
        const CpuSet& cpus = groups.at(id);
        if (need >= cpus.Size() && cpus.IsSubsetOf(free)) Take(cpus);
      }
    }
    void TakeCores() {
      for (int i : Cores()) {
        const CpuSet& cpus = k.cores_[i];
        if (cpus.Size() == k.cpus_per_core_ && cpus.IsSubsetOf(free) && need >= cpus.Size()) {
          Take(cpus);
        }
      }
    }
    void TakeSingles() {
      for (int i : Cores()) {
        for (int cpu : k.cores_[i].Intersection(free)) {
          if (need <= 0) return;
          Take(CpuSet{cpu});
        }
      }
    }
  };

  std::vector<CpuSet> cores_;
  std::map<int, int> core_node_, core_socket_;
  std::map<int, CpuSet> node_cpus_, socket_cpus_;
  std::map<int, std::set<int>> sockets_of_node_, nodes_of_socket_;
  int cpus_per_core_ = 1;
  bool numa_first_ = true;
};

int Sockets(const CpuLayout& layout, const CpuSet& cpus) {
  std::set<int> sockets;
  for (int cpu : cpus) sockets.insert(layout.cores()[layout.CoreOf(cpu)].socket);
  return static_cast<int>(sockets.size());
}

int WholeCores(const CpuLayout& layout, const CpuSet& cpus) {
  int n = 0;
  for (const CoreInfo& core : layout.cores()) {
    if (core.threads.Size() == layout.threads_per_core() && core.threads.IsSubsetOf(cpus)) ++n;
  }
  return n;
}

// A random free set: each CPU free with a random density, some nodes all free or all busy.
CpuSet RandomFree(const CpuLayout& layout, std::mt19937& rng) {
  const double density = 0.1 + 0.9 * (rng() % 1000) / 1000.0;
  CpuSet free;
  for (int cpu : layout.online()) {
    if ((rng() % 1000) / 1000.0 < density) free.Add(cpu);
  }
  for (const auto& [node, cpus] : layout.node_cpus()) {
    const unsigned roll = rng() % 6;
    if (roll == 0) free = free.Union(cpus);
    if (roll == 1) free = free.Difference(cpus);
  }
  return free;
}

void Compare(const std::string& shape, uint32_t seed, int trials) {
  const machine::MachineTopology topology = FakeTopology(shape);
  const CpuLayout layout(topology);
  const KubeletPacked kubelet(topology);
  std::mt19937 rng(seed);
  int fewer_nodes = 0, fewer_sockets = 0, same = 0, fewer_whole_cores = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const CpuSet free = RandomFree(layout, rng);
    if (free.Empty()) continue;
    const int count = 1 + static_cast<int>(rng() % free.Size());
    const CpuSet reference = kubelet.Take(free, count);
    auto ours = TakeExclusiveCpus(layout, free, count);
    INFO(shape << " trial " << trial << ": " << count << " of " << free << ": plugin "
               << (ours.ok() ? ours->ToString() : ours.status().ToString()) << ", kubelet "
               << reference);
    REQUIRE(ours.ok());
    REQUIRE(reference.Size() == count);  // the reference itself is sound
    REQUIRE(reference.IsSubsetOf(free));
    REQUIRE(ours->Size() == count);
    REQUIRE(ours->IsSubsetOf(free));
    const int our_nodes = layout.NodesOf(*ours).Count();
    const int their_nodes = layout.NodesOf(reference).Count();
    REQUIRE(our_nodes <= their_nodes);
    if (our_nodes == their_nodes) REQUIRE(Sockets(layout, *ours) <= Sockets(layout, reference));
    fewer_nodes += our_nodes < their_nodes;
    fewer_sockets +=
        our_nodes == their_nodes && Sockets(layout, *ours) < Sockets(layout, reference);
    same += *ours == reference;
    fewer_whole_cores += WholeCores(layout, *ours) < WholeCores(layout, reference);
  }
  // Figures for the record (ctest --output-on-failure, or -s).
  WARN(shape << ": " << trials << " requests: fewer NUMA nodes than the kubelet in " << fewer_nodes
             << ", fewer sockets on as many nodes in " << fewer_sockets << ", identical CPUs in "
             << same << ", fewer whole cores in " << fewer_whole_cores);
}

TEST_CASE("packing vs the kubelet: snc4 (1 socket, 4 nodes)", "[cpu][exclusive][packing]") {
  Compare("snc4", 12, 3000);
}

TEST_CASE("packing vs the kubelet: intel96 (split siblings)", "[cpu][exclusive][packing]") {
  Compare("intel96", 96, 3000);
}

TEST_CASE("packing vs the kubelet: snc4x2off (offline CPUs)", "[cpu][exclusive][packing]") {
  Compare("snc4x2off", 7, 3000);
}

TEST_CASE("packing vs the kubelet: 4x32smt and doc80", "[cpu][exclusive][packing]") {
  Compare("4x32smt", 32, 1500);
  Compare("doc80", 80, 1500);
}

}  // namespace
}  // namespace qrm::cpu::testing
