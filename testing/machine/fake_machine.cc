#include "testing/machine/fake_machine.h"

#include <cerrno>
#include <filesystem>
#include <map>
#include <system_error>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "common/id_list.h"
#include "common/numa_mask.h"

namespace qrm::machine::fake {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

Status MakeDirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return ErrnoError(ec.value(), "create directory", path);
  return Status::Ok();
}

Status Write(const std::string& path, const std::string& content) {
  QRM_RETURN_IF_ERROR(MakeDirs(fs::path(path).parent_path().string()));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, "create", path);
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoError(err, "write", path);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return ErrnoError(errno, "close", path);
  return Status::Ok();
}

// Sysfs values end with a newline.
Status WriteValue(const std::string& path, const std::string& value) {
  return Write(path, value + "\n");
}

Status Symlink(const std::string& target, const std::string& link) {
  QRM_RETURN_IF_ERROR(MakeDirs(fs::path(link).parent_path().string()));
  std::error_code ec;
  fs::remove(link, ec);
  fs::create_symlink(target, link, ec);
  if (ec) return ErrnoError(ec.value(), "symlink", link);
  return Status::Ok();
}

Status Validate(const FakeMachineShape& shape) {
  if (shape.nodes.empty()) {
    return InvalidArgumentError(fmt::format("shape {}: no nodes", shape.name));
  }
  if (shape.nodes.size() > static_cast<size_t>(NumaMask::kMaxNodes)) {
    return InvalidArgumentError(
        fmt::format("shape {}: {} nodes, at most 64", shape.name, shape.nodes.size()));
  }
  if (shape.threads_per_core < 1 || shape.nodes_per_socket < 1) {
    return InvalidArgumentError(
        fmt::format("shape {}: threads_per_core {} and nodes_per_socket {} must be >= 1",
                    shape.name, shape.threads_per_core, shape.nodes_per_socket));
  }
  for (size_t i = 0; i < shape.nodes.size(); ++i) {
    if (shape.nodes[i].cpus < 0 || shape.nodes[i].cpus % shape.threads_per_core != 0) {
      return InvalidArgumentError(
          fmt::format("shape {}: node {} has {} cpus, not a multiple of threads_per_core {}",
                      shape.name, i, shape.nodes[i].cpus, shape.threads_per_core));
    }
  }
  if (shape.NumCpus() == 0) {
    return InvalidArgumentError(fmt::format("shape {}: no cpus", shape.name));
  }
  CpuSet all;
  all.AddRange(0, shape.NumCpus() - 1);
  if (!shape.offline_cpus.IsSubsetOf(all) || shape.offline_cpus == all) {
    return InvalidArgumentError(fmt::format("shape {}: offline cpus {} must be some of {}",
                                            shape.name, shape.offline_cpus.ToString(),
                                            all.ToString()));
  }
  if (!shape.distances.empty()) {
    bool square = shape.distances.size() == shape.nodes.size();
    for (const auto& row : shape.distances) square = square && row.size() == shape.nodes.size();
    if (!square) {
      return InvalidArgumentError(fmt::format("shape {}: distances must be {}x{}", shape.name,
                                              shape.nodes.size(), shape.nodes.size()));
    }
  }
  for (const FakeNic& nic : shape.nics) {
    if (nic.name.empty() || nic.name == "lo" || nic.name.find('/') != std::string::npos) {
      return InvalidArgumentError(
          fmt::format("shape {}: bad nic name \"{}\"", shape.name, nic.name));
    }
    if (nic.numa_node >= static_cast<int>(shape.nodes.size())) {
      return InvalidArgumentError(fmt::format("shape {}: nic {} on node {}, which does not exist",
                                              shape.name, nic.name, nic.numa_node));
    }
  }
  return Status::Ok();
}

struct NicLayout {
  std::string name;
  bool is_virtual = false;
  std::string pci;  // device directory name for physical NICs
  int numa_node = -1;
  std::optional<std::string> speed;
  std::string operstate;
  std::string mac;
  std::string type = "1";  // ARPHRD_ETHER
  int ifindex = 0;
  std::vector<std::string> addresses;
};

// Writes one NIC under `root` (a sysfs root or a fake namespace directory).
Status WriteNic(const std::string& root, const NicLayout& nic) {
  std::string dev_rel;  // relative to root/devices
  if (nic.is_virtual) {
    dev_rel = "virtual/net/" + nic.name;
  } else {
    const std::string pci_dir = root + "/devices/pci0000:00/" + nic.pci;
    QRM_RETURN_IF_ERROR(WriteValue(pci_dir + "/numa_node", std::to_string(nic.numa_node)));
    QRM_RETURN_IF_ERROR(WriteValue(pci_dir + "/vendor", "0x15b3"));
    dev_rel = "pci0000:00/" + nic.pci + "/net/" + nic.name;
  }
  const std::string dir = root + "/devices/" + dev_rel;
  QRM_RETURN_IF_ERROR(MakeDirs(dir));
  if (!nic.is_virtual) QRM_RETURN_IF_ERROR(Symlink("../../../" + nic.pci, dir + "/device"));
  if (nic.speed.has_value()) QRM_RETURN_IF_ERROR(WriteValue(dir + "/speed", *nic.speed));
  QRM_RETURN_IF_ERROR(WriteValue(dir + "/operstate", nic.operstate));
  QRM_RETURN_IF_ERROR(WriteValue(dir + "/address", nic.mac));
  QRM_RETURN_IF_ERROR(WriteValue(dir + "/type", nic.type));
  QRM_RETURN_IF_ERROR(WriteValue(dir + "/ifindex", std::to_string(nic.ifindex)));
  std::string addresses;
  for (const std::string& a : nic.addresses) addresses += a + "\n";
  QRM_RETURN_IF_ERROR(Write(dir + "/" + kFakeAddressesFile, addresses));
  return Symlink("../../devices/" + dev_rel, root + "/class/net/" + nic.name);
}

Status WriteNics(const FakeMachineShape& shape, const FakeMachinePaths& paths) {
  // Group by namespace; every namespace gets its own lo (ifindex 1).
  std::map<std::string, std::vector<const FakeNic*>> by_ns;
  by_ns[""];
  for (const FakeNic& nic : shape.nics) by_ns[nic.netns].push_back(&nic);
  int pci_slot = 0;
  for (const auto& [ns, nics] : by_ns) {
    const std::string root = ns.empty() ? paths.sysfs_root : paths.netns_dir + "/" + ns;
    NicLayout lo;
    lo.name = "lo";
    lo.is_virtual = true;
    lo.operstate = "unknown";
    lo.mac = "00:00:00:00:00:00";
    lo.type = "772";  // ARPHRD_LOOPBACK
    lo.ifindex = 1;
    lo.speed = std::nullopt;
    lo.addresses = {"127.0.0.1", "::1"};
    QRM_RETURN_IF_ERROR(WriteNic(root, lo));
    int next_ifindex = 2;
    for (const FakeNic* nic : nics) {
      NicLayout layout;
      layout.name = nic->name;
      layout.is_virtual = nic->is_virtual;
      layout.pci = fmt::format("0000:{:02x}:00.0", 0x3b + pci_slot++);
      layout.numa_node = nic->numa_node;
      layout.speed = nic->speed;
      layout.operstate = nic->operstate;
      layout.mac = nic->mac;
      layout.ifindex = nic->ifindex != 0 ? nic->ifindex : next_ifindex;
      next_ifindex = layout.ifindex + 1;
      layout.addresses = nic->addresses;
      QRM_RETURN_IF_ERROR(WriteNic(root, layout));
    }
  }
  // The netns directory exists even without namespaces, like /var/run/netns after
  // `ip netns add` and `ip netns delete`.
  return MakeDirs(paths.netns_dir);
}

// One online CPU's topology directory.
Status WriteCpuTopology(const std::string& cpu_dir, int cpu, int package, int core_id,
                        const CpuSet& siblings, const CpuSet& package_cpus) {
  const std::string topo = fmt::format("{}/cpu{}/topology", cpu_dir, cpu);
  QRM_RETURN_IF_ERROR(WriteValue(topo + "/physical_package_id", std::to_string(package)));
  QRM_RETURN_IF_ERROR(WriteValue(topo + "/die_id", "0"));
  QRM_RETURN_IF_ERROR(WriteValue(topo + "/core_id", std::to_string(core_id)));
  QRM_RETURN_IF_ERROR(WriteValue(topo + "/thread_siblings_list", siblings.ToString()));
  QRM_RETURN_IF_ERROR(WriteValue(topo + "/core_cpus_list", siblings.ToString()));
  QRM_RETURN_IF_ERROR(WriteValue(topo + "/core_siblings_list", package_cpus.ToString()));
  return WriteValue(topo + "/package_cpus_list", package_cpus.ToString());
}

// sys/devices/system/cpu: the online/possible/present lists and every CPU's directory.
Status WriteCpus(const FakeMachineShape& shape, const std::string& cpu_dir) {
  const int num_nodes = static_cast<int>(shape.nodes.size());
  CpuSet all_cpus;
  all_cpus.AddRange(0, shape.NumCpus() - 1);
  const CpuSet online = all_cpus.Difference(shape.offline_cpus);
  QRM_RETURN_IF_ERROR(WriteValue(cpu_dir + "/online", online.ToString()));
  for (const char* file : {"possible", "present"}) {
    QRM_RETURN_IF_ERROR(WriteValue(cpu_dir + "/" + file, all_cpus.ToString()));
  }
  // A CPU taken down keeps its directory with online = 0 and loses its topology.
  for (int cpu : shape.offline_cpus) {
    QRM_RETURN_IF_ERROR(WriteValue(fmt::format("{}/cpu{}/online", cpu_dir, cpu), "0"));
  }
  std::map<int, CpuSet> package_cpus;
  for (int n = 0; n < num_nodes; ++n) {
    package_cpus[shape.SocketOfNode(n)] =
        package_cpus[shape.SocketOfNode(n)].Union(shape.NodeCpus(n));
  }
  std::map<int, int> next_core_id;  // per package
  int core = 0;
  for (int n = 0; n < num_nodes; ++n) {
    const int package = shape.SocketOfNode(n);
    for (int i = 0; i < shape.nodes[n].cpus / shape.threads_per_core; ++i, ++core) {
      const int core_id = next_core_id[package]++;
      const CpuSet siblings = shape.CoreCpus(core).Difference(shape.offline_cpus);
      for (int cpu : siblings) {
        QRM_RETURN_IF_ERROR(
            WriteCpuTopology(cpu_dir, cpu, package, core_id, siblings, package_cpus[package]));
        if (shape.write_node_dir) {
          // The kernel links cpu<N>/node<M>; discovery does not need it, fidelity does.
          QRM_RETURN_IF_ERROR(Symlink(fmt::format("../../node/node{}", n),
                                      fmt::format("{}/cpu{}/node{}", cpu_dir, cpu, n)));
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace

int FakeMachineShape::NumCpus() const {
  int n = 0;
  for (const FakeNode& node : nodes) n += node.cpus;
  return n;
}

CpuSet FakeMachineShape::CoreCpus(int core) const {
  CpuSet set;
  for (int t = 0; t < threads_per_core; ++t) {
    set.Add(split_siblings ? core + t * NumCores() : core * threads_per_core + t);
  }
  return set;
}

CpuSet FakeMachineShape::NodeCpus(int node) const {
  if (node < 0 || node >= static_cast<int>(nodes.size())) return CpuSet();
  int first_core = 0;
  for (int i = 0; i < node; ++i) first_core += nodes[i].cpus / threads_per_core;
  CpuSet set;
  for (int core = first_core; core < first_core + nodes[node].cpus / threads_per_core; ++core) {
    set = set.Union(CoreCpus(core));
  }
  return set.Difference(offline_cpus);
}

int FakeMachineShape::Distance(int from, int to) const {
  if (!distances.empty()) return distances[from][to];
  if (from == to) return 10;
  return SocketOfNode(from) == SocketOfNode(to) ? 12 : 21;
}

DiscoveryOptions FakeMachinePaths::Options() const {
  DiscoveryOptions options;
  options.sysfs_root = sysfs_root;
  options.procfs_root = procfs_root;
  options.netns_dir = netns_dir;
  return options;
}

StatusOr<FakeMachinePaths> WriteFakeMachine(const FakeMachineShape& shape, const std::string& dir) {
  QRM_RETURN_IF_ERROR(Validate(shape));
  FakeMachinePaths paths;
  paths.root = dir;
  paths.sysfs_root = dir + "/sys";
  paths.procfs_root = dir + "/proc";
  paths.netns_dir = dir + "/netns";
  const std::string cpu_dir = paths.sysfs_root + "/devices/system/cpu";
  const std::string node_dir = paths.sysfs_root + "/devices/system/node";
  const int num_nodes = static_cast<int>(shape.nodes.size());

  QRM_RETURN_IF_ERROR(WriteCpus(shape, cpu_dir));

  // Memory and NUMA nodes.
  uint64_t total = 0;
  uint64_t free = 0;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> hugepages;  // size kB -> total, free
  for (const FakeNode& node : shape.nodes) {
    total += node.memory_bytes / 1024 * 1024;
    free += node.free_bytes / 1024 * 1024;
    for (const FakeHugePages& pool : node.hugepages) {
      hugepages[pool.page_size_kb].first += pool.total_pages;
      hugepages[pool.page_size_kb].second += pool.free_pages;
    }
  }
  QRM_RETURN_IF_ERROR(
      Write(paths.procfs_root + "/meminfo", fmt::format("MemTotal:       {:>10} kB\n"
                                                        "MemFree:        {:>10} kB\n"
                                                        "MemAvailable:   {:>10} kB\n"
                                                        "Buffers:                 0 kB\n",
                                                        total / 1024, free / 1024, free / 1024)));
  for (const auto& [size_kb, counts] : hugepages) {
    const std::string pool =
        fmt::format("{}/kernel/mm/hugepages/hugepages-{}kB", paths.sysfs_root, size_kb);
    QRM_RETURN_IF_ERROR(WriteValue(pool + "/nr_hugepages", std::to_string(counts.first)));
    QRM_RETURN_IF_ERROR(WriteValue(pool + "/free_hugepages", std::to_string(counts.second)));
  }

  if (shape.write_node_dir) {
    std::vector<int> with_cpus;
    std::vector<int> with_memory;
    for (int n = 0; n < num_nodes; ++n) {
      if (!shape.NodeCpus(n).Empty()) with_cpus.push_back(n);
      if (shape.nodes[n].memory_bytes > 0) with_memory.push_back(n);
    }
    const std::string all_nodes = fmt::format("0-{}", num_nodes - 1);
    const std::string nodes_text = num_nodes == 1 ? "0" : all_nodes;
    QRM_RETURN_IF_ERROR(WriteValue(node_dir + "/online", nodes_text));
    QRM_RETURN_IF_ERROR(WriteValue(node_dir + "/possible", nodes_text));
    QRM_RETURN_IF_ERROR(WriteValue(node_dir + "/has_cpu", FormatIdList(with_cpus)));
    QRM_RETURN_IF_ERROR(WriteValue(node_dir + "/has_memory", FormatIdList(with_memory)));
    for (int n = 0; n < num_nodes; ++n) {
      const FakeNode& node = shape.nodes[n];
      const std::string ndir = fmt::format("{}/node{}", node_dir, n);
      QRM_RETURN_IF_ERROR(WriteValue(ndir + "/cpulist", shape.NodeCpus(n).ToString()));
      const uint64_t node_total = node.memory_bytes / 1024;
      const uint64_t node_free = node.free_bytes / 1024;
      QRM_RETURN_IF_ERROR(Write(ndir + "/meminfo",
                                fmt::format("Node {0} MemTotal:       {1:>10} kB\n"
                                            "Node {0} MemFree:        {2:>10} kB\n"
                                            "Node {0} MemUsed:        {3:>10} kB\n"
                                            "Node {0} HugePages_Total:     0\n",
                                            n, node_total, node_free,
                                            node_total >= node_free ? node_total - node_free : 0)));
      std::string distances;
      for (int m = 0; m < num_nodes; ++m) {
        distances += fmt::format("{}{}", m == 0 ? "" : " ", shape.Distance(n, m));
      }
      QRM_RETURN_IF_ERROR(WriteValue(ndir + "/distance", distances));
      for (const FakeHugePages& pool : node.hugepages) {
        const std::string pool_dir =
            fmt::format("{}/hugepages/hugepages-{}kB", ndir, pool.page_size_kb);
        QRM_RETURN_IF_ERROR(
            WriteValue(pool_dir + "/nr_hugepages", std::to_string(pool.total_pages)));
        QRM_RETURN_IF_ERROR(
            WriteValue(pool_dir + "/free_hugepages", std::to_string(pool.free_pages)));
      }
    }
  }

  QRM_RETURN_IF_ERROR(WriteNics(shape, paths));
  return paths;
}

FakeMachineShape Doc80Shape() {
  FakeMachineShape shape;
  shape.name = "doc80";
  const std::vector<FakeHugePages> pools = {{2048, 0, 0}, {1048576, 0, 0}};
  shape.nodes = {
      {40, 237706936320ULL, 200ULL * kGiB, pools},
      {40, 237806551040ULL, 210ULL * kGiB, pools},
  };
  shape.threads_per_core = 2;
  shape.nodes_per_socket = 1;
  FakeNic eth0;
  eth0.name = "eth0";
  eth0.numa_node = 0;
  eth0.mac = "0c:42:a1:00:00:10";
  eth0.addresses = {"10.0.0.10", "fd00::10", "fe80::e42:a1ff:fe00:10"};
  FakeNic eth1;
  eth1.name = "eth1";
  eth1.netns = "ns1";
  eth1.numa_node = 1;
  eth1.mac = "0c:42:a1:00:01:10";
  eth1.addresses = {"10.0.1.10", "fd00:1::10"};
  shape.nics = {eth0, eth1};
  return shape;
}

FakeMachineShape FourBy32SmtShape() {
  FakeMachineShape shape;
  shape.name = "4x32smt";
  for (int n = 0; n < 4; ++n) {
    shape.nodes.push_back({32, 64 * kGiB, 60 * kGiB, {{2048, 0, 0}, {1048576, 4, 2}}});
  }
  shape.threads_per_core = 2;
  shape.nodes_per_socket = 2;
  for (int n = 0; n < 4; ++n) {
    FakeNic nic;
    nic.name = fmt::format("eth{}", n);
    nic.numa_node = n;
    nic.speed = "100000";
    nic.mac = fmt::format("0c:42:a1:00:0{}:20", n);
    nic.addresses = {fmt::format("10.0.{}.20", n), fmt::format("fd00:{}::20", n)};
    shape.nics.push_back(nic);
  }
  FakeNic veth;
  veth.name = "veth0";
  veth.is_virtual = true;
  veth.speed = "10000";
  veth.mac = "0e:00:00:00:00:01";
  veth.addresses = {"172.16.0.1"};
  shape.nics.push_back(veth);
  return shape;
}

FakeMachineShape NoSmtShape() {
  FakeMachineShape shape;
  shape.name = "nosmt";
  shape.nodes = {{16, 32 * kGiB, 30 * kGiB, {{2048, 512, 512}}}};
  shape.threads_per_core = 1;
  FakeNic eth0;
  eth0.name = "eth0";
  eth0.numa_node = -1;
  eth0.speed = "-1";
  eth0.mac = "52:54:00:00:00:01";
  eth0.addresses = {"192.168.1.5"};
  shape.nics = {eth0};
  return shape;
}

FakeMachineShape MemOnlyShape() {
  FakeMachineShape shape;
  shape.name = "memonly";
  shape.nodes = {{16, 32 * kGiB, 30 * kGiB, {}}, {0, 64 * kGiB, 64 * kGiB, {}}};
  shape.threads_per_core = 2;
  shape.nodes_per_socket = 1;
  FakeNic eth0;
  eth0.name = "eth0";
  eth0.numa_node = -1;
  eth0.speed = "0";
  eth0.operstate = "down";
  eth0.mac = "52:54:00:00:00:02";
  shape.nics = {eth0};
  return shape;
}

// A placement shape: `sockets` x `nodes_per_socket` nodes of `cores` SMT-2 cores, 16 GiB each.
FakeMachineShape PlacementShape(std::string name, int sockets, int nodes_per_socket, int cores) {
  FakeMachineShape shape;
  shape.name = std::move(name);
  for (int n = 0; n < sockets * nodes_per_socket; ++n) {
    shape.nodes.push_back({cores * 2, 16 * kGiB, 15 * kGiB, {}});
  }
  shape.threads_per_core = 2;
  shape.nodes_per_socket = nodes_per_socket;
  return shape;
}

FakeMachineShape Snc4Shape() {
  return PlacementShape("snc4", 1, 4, 4);
}

FakeMachineShape Intel96Shape() {
  FakeMachineShape shape = PlacementShape("intel96", 2, 2, 12);
  shape.split_siblings = true;
  return shape;
}

FakeMachineShape Snc4x2OfflineShape() {
  FakeMachineShape shape = PlacementShape("snc4x2off", 2, 4, 4);
  shape.split_siblings = true;
  shape.offline_cpus = CpuSet{13, 38, 45, 63};
  return shape;
}

FakeMachineShape TwoCpuShape() {
  return PlacementShape("2cpu", 1, 1, 1);
}

std::vector<std::string> ShapeNames() {
  return {"doc80", "4x32smt", "nosmt", "memonly", "snc4", "intel96", "snc4x2off", "2cpu"};
}

StatusOr<FakeMachineShape> ShapeByName(std::string_view name) {
  if (name == "doc80") return Doc80Shape();
  if (name == "4x32smt") return FourBy32SmtShape();
  if (name == "nosmt") return NoSmtShape();
  if (name == "memonly") return MemOnlyShape();
  if (name == "snc4") return Snc4Shape();
  if (name == "intel96") return Intel96Shape();
  if (name == "snc4x2off") return Snc4x2OfflineShape();
  if (name == "2cpu") return TwoCpuShape();
  std::string known;
  for (const std::string& n : ShapeNames()) known += (known.empty() ? "" : ", ") + n;
  return NotFoundError(fmt::format("unknown fake machine shape \"{}\" (known: {})", name, known));
}

}  // namespace qrm::machine::fake
