#include "bench/advisor/fake_node.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include "advisor/agent/host_view.h"
#include "api/admin_v1.pb.h"
#include "common/config/config.h"

namespace qrm::bench::advisor {

namespace qa = ::qrm::advisor;
namespace adm = ::qrm::admin::v1;

namespace {

constexpr double kNsPerSecond = 1e9;
constexpr int kUserHz = 100;  // /proc/stat's ticks per second and CPU
constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kMemTotal = 384ULL * 1024 * kMiB;
constexpr uint64_t kSystemBytes = 6ULL * 1024 * kMiB;  // the node's own use besides pods

// A private directory on tmpfs (/dev/shm) when there is one, else under $TMPDIR or /tmp:
// the benchmark measures the advisor, not a disk.
std::string MakeScratchDir() {
  std::string base = "/tmp";
  if (const char* t = std::getenv("TMPDIR")) base = t;
  if (::access("/dev/shm", W_OK) == 0) base = "/dev/shm";
  std::string path = base + "/qrm-advisor-bench-XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) throw std::runtime_error("mkdtemp in " + base);
  return path;
}

// Replaces a small file's content the way the kernel's files change: in place.
void WriteFile(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + path);
  const ssize_t n = ::write(fd, content.data(), content.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(content.size())) throw std::runtime_error("short write " + path);
}

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Identifiers as long as real ones (a pod uid is a UUID, a container id 64 hex digits):
// their strings are part of the advisor's memory.
std::string PodUid(int pod) {
  const uint64_t h = SplitMix(static_cast<uint64_t>(pod));
  return fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", h >> 32, (h >> 16) & 0xffff,
                     h & 0xfff, (h >> 4) & 0xfff, SplitMix(h) & 0xffffffffffffULL);
}

std::string ContainerId(size_t i) {
  std::string id;
  for (uint64_t k = 0; k < 4; ++k) id += fmt::format("{:016x}", SplitMix(i * 4 + k + 1000));
  return id;
}

std::string CpuRange(int first, int count) {
  return count == 1 ? std::to_string(first) : fmt::format("{}-{}", first, first + count - 1);
}

// A cgroup v1 memory.stat with every key a 5.x kernel writes, total_inactive_file near the end.
std::string MemoryStat(uint64_t working_set, uint64_t inactive_file) {
  const uint64_t active_file = working_set / 8, rss = working_set - active_file;
  const uint64_t cache = active_file + inactive_file;
  std::string out;
  for (const char* prefix : {"", "total_"}) {
    out += fmt::format(
        "{0}cache {1}\n{0}rss {2}\n{0}rss_huge 0\n{0}shmem 0\n{0}mapped_file {3}\n{0}dirty 0\n"
        "{0}writeback 0\n{0}swap 0\n{0}pgpgin 1183727\n{0}pgpgout 1154218\n{0}pgfault 2381862\n"
        "{0}pgmajfault 33\n{0}inactive_anon 0\n{0}active_anon {2}\n{0}inactive_file {4}\n"
        "{0}active_file {5}\n{0}unevictable 0\n",
        prefix, cache, rss, active_file / 2, inactive_file, active_file);
    if (*prefix == '\0') {
      out +=
          "hierarchical_memory_limit 9223372036854771712\n"
          "hierarchical_memsw_limit 9223372036854771712\n";
    }
  }
  return out;
}

// The rest of /proc/stat after the cpu lines: interrupt counts (one per IRQ, as many as a
// large server lists), context switches, boot time, processes, softirqs.
std::string ProcStatTail() {
  std::string out = "intr 981273645";
  for (int irq = 0; irq < 512; ++irq) out += irq % 7 == 0 ? " 18273" : " 0";
  out +=
      "\nctxt 2938475612\nbtime 1700000000\nprocesses 3817263\nprocs_running 3\n"
      "procs_blocked 0\nsoftirq 551234987 12 98123987 3 61234123 0 0 1234 87123987 0 "
      "91234123\n";
  return out;
}

class FakeHostSource : public qa::HostSource {
 public:
  FakeHostSource(std::string allocations, std::string allocatable)
      : allocations_(std::move(allocations)), allocatable_(std::move(allocatable)) {}

  // What HostClient::Fetch does after its two calls: parse the answers, make the view.
  StatusOr<qa::HostView> Fetch() override {
    adm::ListAllocationsResponse allocations;
    adm::GetAllocatableResponse allocatable;
    if (!allocations.ParseFromString(allocations_) || !allocatable.ParseFromString(allocatable_)) {
      return DataLossError("fake qrm-host: answers do not parse");
    }
    return qa::MakeHostView(allocations, allocatable);
  }

 private:
  std::string allocations_, allocatable_;  // serialized, as they come off the wire
};

class FakeRuntimeSource : public qa::RuntimeSource {
 public:
  explicit FakeRuntimeSource(std::vector<qa::TrackedContainer> running)
      : running_(std::move(running)) {}
  StatusOr<std::vector<qa::TrackedContainer>> ListContainers() override { return running_; }

 private:
  std::vector<qa::TrackedContainer> running_;
};

void AddAllocation(const FakeContainer& c, adm::PodAllocation& pod) {
  adm::ContainerAllocation* a = pod.add_containers();
  a->set_name(c.tracked.name);
  a->set_cpuset_cpus(c.cpuset);
  a->set_cpuset_mems("0-1");
  a->set_qos_level(c.qos_level);
  (*a->mutable_requests())["cpu"] = c.tracked.cpu_request;
  (*a->mutable_annotations())["katalyst.kubewharf.io/qos_level"] = c.qos_level;
  auto& cpu = (*a->mutable_resources())["cpu"];
  cpu.set_oci_property_name("CpusetCpus");
  cpu.set_is_node_resource(true);
  cpu.set_is_scalar_resource(true);
  cpu.set_allocated_quantity(c.tracked.cpu_request);
  cpu.set_allocation_result(c.cpuset);
}

}  // namespace

FakeNode::FakeNode(const FakeNodeOptions& options) : options_(options), dir_(MakeScratchDir()) {
  MakeContainers();
  std::filesystem::create_directories(dir_ + "/proc");
  std::filesystem::create_directories(dir_ + "/cpu");
  for (size_t i = 0; i < containers_.size(); ++i) {
    std::filesystem::create_directories(
        std::filesystem::path(containers_[i].cpu_file).parent_path());
    std::filesystem::create_directories(
        std::filesystem::path(containers_[i].usage_file).parent_path());
    WriteCpu(i);
    WriteMemory(i, 0);
  }
  WriteProcStat();
  WriteMeminfo(0);
}

FakeNode::~FakeNode() {
  if (keep_files_) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

int FakeNode::pods() const {
  const int per_pod = std::max(options_.containers_per_pod, 1);
  return (options_.containers + per_pod - 1) / per_pod;
}

// Container i: the first `dedicated_containers` dedicated_cores (4 CPUs each, after the
// reserved CPUs), the pods of every reclaimed_every-th of the others reclaimed_cores, the rest
// shared_cores. `shared` and `reclaimed` are the two pools' CPUs. level_cores is a weight for
// all but the dedicated containers (MakeContainers scales it).
FakeContainer FakeNode::MakeContainer(int i, const std::string& shared,
                                      const std::string& reclaimed) const {
  const int per_pod = std::max(options_.containers_per_pod, 1);
  const int pod = i / per_pod, every = std::max(options_.reclaimed_every, 1);
  FakeContainer c;
  qa::TrackedContainer& t = c.tracked;
  t.pod_uid = PodUid(pod);
  t.pod_name = fmt::format("service-{}-7d9f8b6c5-{:05x}", pod % 37, SplitMix(pod) & 0xfffff);
  t.pod_namespace = pod % 3 == 0 ? "online" : "default";
  t.name = i % per_pod == 0 ? "app" : fmt::format("sidecar-{}", i % per_pod);
  t.container_id = ContainerId(static_cast<size_t>(i));
  const bool is_dedicated = i < options_.dedicated_containers;
  const bool is_reclaimed = !is_dedicated && pod % every == every - 1;
  c.qos_level = is_dedicated   ? "dedicated_cores"
                : is_reclaimed ? "reclaimed_cores"
                               : "shared_cores";
  c.cpuset = is_dedicated   ? CpuRange(options_.reserved_cpus + 4 * i, 4)
             : is_reclaimed ? reclaimed
                            : shared;
  const char* qos_dir = is_dedicated ? "" : is_reclaimed ? "/besteffort" : "/burstable";
  t.cgroup_path = fmt::format("/kubepods{}/pod{}/{}", qos_dir, t.pod_uid, t.container_id);
  t.cpu_request = is_dedicated ? 4 : is_reclaimed ? 0 : 0.25 * (1 + i % 4);
  c.level_cores = is_dedicated ? 3 : 0.5 + (i % 8) / 8.0;
  c.level_bytes = is_dedicated ? 4096 * kMiB : 32 * kMiB * (1 + i % 8);
  c.cpu_file = dir_ + "/cgroup/cpuacct" + t.cgroup_path + "/cpuacct.usage";
  c.usage_file = dir_ + "/cgroup/memory" + t.cgroup_path + "/memory.usage_in_bytes";
  c.stat_file = dir_ + "/cgroup/memory" + t.cgroup_path + "/memory.stat";
  return c;
}

// The pool CPUs (neither reserved nor dedicated) are split 3:1 between the shared and
// reclaimed pools; the containers that are not dedicated use busy_share of them on average.
void FakeNode::MakeContainers() {
  const int dedicated = std::min(options_.dedicated_containers, options_.containers);
  const int pool_first = options_.reserved_cpus + 4 * dedicated;
  const int pool_cpus = options_.online_cpus - pool_first;
  if (pool_cpus < 2) throw std::runtime_error("fake node: no pool CPUs left");
  const int shared_cpus = pool_cpus * 3 / 4;
  const std::string shared = CpuRange(pool_first, shared_cpus);
  const std::string reclaimed = CpuRange(pool_first + shared_cpus, pool_cpus - shared_cpus);
  double weights = 0;
  for (int i = 0; i < options_.containers; ++i) {
    containers_.push_back(MakeContainer(i, shared, reclaimed));
    if (i >= dedicated) weights += containers_.back().level_cores;
  }
  const double scale = weights > 0 ? options_.busy_share * pool_cpus / weights : 0;
  for (size_t i = static_cast<size_t>(dedicated); i < containers_.size(); ++i) {
    containers_[i].level_cores *= scale;
  }
}

// 0.7 to 1.3, constant within a minute, averaging 1 over ten minutes.
double FakeNode::MinuteFactor(size_t i, int64_t second) const {
  const int64_t minute = second > 0 ? (second - 1) / 60 : 0;
  const int64_t k = (minute * 7 + static_cast<int64_t>(i) * 13) % 10;
  return 0.7 + 0.6 * static_cast<double>(k) / 9;
}

double FakeNode::Cores(size_t i, int64_t second) const {
  // What the counter advances by in that second is rounded to whole nanoseconds.
  return std::llround(containers_[i].level_cores * MinuteFactor(i, second) * kNsPerSecond) /
         kNsPerSecond;
}

uint64_t FakeNode::WorkingSet(size_t i, int64_t second) const {
  const double factor = 0.9 + (MinuteFactor(i, second + 1) - 0.7) / 3;  // 0.9 to 1.1
  return static_cast<uint64_t>(static_cast<double>(containers_[i].level_bytes) * factor);
}

double FakeNode::NodeCores(int64_t second) const {
  double cores = 1.5 + 0.5 * static_cast<double>((second / 60) % 4) / 3;  // system daemons
  for (size_t i = 0; i < containers_.size(); ++i) cores += Cores(i, second);
  return cores;
}

void FakeNode::AdvanceTo(int64_t second, bool memory) {
  for (int64_t s = second_ + 1; s <= second; ++s) {
    for (size_t i = 0; i < containers_.size(); ++i) {
      containers_[i].cpu_ns += static_cast<uint64_t>(std::llround(Cores(i, s) * kNsPerSecond));
    }
    busy_ticks_ += NodeCores(s) * kUserHz;
    total_ticks_ += static_cast<uint64_t>(options_.online_cpus) * kUserHz;
  }
  second_ = std::max(second_, second);
  for (size_t i = 0; i < containers_.size(); ++i) {
    WriteCpu(i);
    if (memory) WriteMemory(i, second_);
  }
  WriteProcStat();
  if (memory) WriteMeminfo(second_);
}

void FakeNode::WriteCpu(size_t i) {
  WriteFile(containers_[i].cpu_file, std::to_string(containers_[i].cpu_ns) + "\n");
}

void FakeNode::WriteMemory(size_t i, int64_t second) {
  const uint64_t working_set = WorkingSet(i, second), inactive = working_set / 4;
  WriteFile(containers_[i].usage_file, std::to_string(working_set + inactive) + "\n");
  WriteFile(containers_[i].stat_file, MemoryStat(working_set, inactive));
}

void FakeNode::WriteProcStat() {
  static const std::string tail = ProcStatTail();
  const uint64_t busy = static_cast<uint64_t>(busy_ticks_);
  const uint64_t idle = total_ticks_ - std::min(busy, total_ticks_);
  const uint64_t system = busy / 5, irq = busy / 100, softirq = busy / 50;
  const uint64_t user = busy - system - irq - softirq;
  std::string out =
      fmt::format("cpu  {} 0 {} {} 0 {} {} 0 0 0\n", user, system, idle, irq, softirq);
  const uint64_t n = static_cast<uint64_t>(options_.online_cpus);
  for (uint64_t cpu = 0; cpu < n; ++cpu) {
    out += fmt::format("cpu{} {} 0 {} {} 0 {} {} 0 0 0\n", cpu, user / n, system / n, idle / n,
                       irq / n, softirq / n);
  }
  WriteFile(dir_ + "/proc/stat", out + tail);
}

void FakeNode::WriteMeminfo(int64_t second) {
  uint64_t used = kSystemBytes;
  for (size_t i = 0; i < containers_.size(); ++i) used += WorkingSet(i, second);
  const uint64_t available = kMemTotal - std::min(used, kMemTotal);
  constexpr const char* kRest =
      "Buffers:          412356 kB\nCached:         81234568 kB\nSwapCached:            0 kB\n"
      "Active:         98123456 kB\nInactive:       61234567 kB\nUnevictable:        4096 kB\n"
      "Mlocked:            4096 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n"
      "Dirty:               812 kB\nWriteback:             0 kB\nAnonPages:      71234567 kB\n"
      "Mapped:          2345678 kB\nShmem:            123456 kB\nKReclaimable:    3456789 kB\n"
      "Slab:            5678901 kB\nSReclaimable:    3456789 kB\nSUnreclaim:      2222112 kB\n"
      "KernelStack:       98304 kB\nPageTables:       456789 kB\nCommitLimit:   201326592 kB\n"
      "Committed_AS:  123456789 kB\nVmallocTotal:   34359738367 kB\nVmallocUsed:      345678 kB\n"
      "HugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\n";
  WriteFile(dir_ + "/proc/meminfo",
            fmt::format("MemTotal:       {} kB\nMemFree:        {} kB\nMemAvailable:   {} kB\n{}",
                        kMemTotal / 1024, available / 2048, available / 1024, kRest));
}

std::unique_ptr<qa::HostSource> FakeNode::MakeHostSource() const {
  adm::ListAllocationsResponse allocations;
  for (size_t i = 0; i < containers_.size(); ++i) {
    const qa::TrackedContainer& t = containers_[i].tracked;
    if (i == 0 || t.pod_uid != containers_[i - 1].tracked.pod_uid) {
      adm::PodAllocation* pod = allocations.add_pods();
      pod->set_uid(t.pod_uid);
      pod->set_name(t.pod_name);
      pod->set_namespace_(t.pod_namespace);
    }
    AddAllocation(containers_[i], *allocations.mutable_pods(allocations.pods_size() - 1));
  }
  adm::GetAllocatableResponse allocatable;
  auto& cpu = (*allocatable.mutable_resources())["cpu"];
  cpu.set_aggregated_allocatable_quantity(allocatable_cpus());
  cpu.set_aggregated_capacity_quantity(options_.online_cpus);
  return std::make_unique<FakeHostSource>(allocations.SerializeAsString(),
                                          allocatable.SerializeAsString());
}

std::unique_ptr<qa::RuntimeSource> FakeNode::MakeRuntimeSource() const {
  std::vector<qa::TrackedContainer> running;
  for (const FakeContainer& c : containers_) running.push_back(c.tracked);
  return std::make_unique<FakeRuntimeSource>(std::move(running));
}

std::vector<std::string> FakeNode::DaemonArgs() const {
  return {"--cgroup-root",        dir_ + "/cgroup",        "--procfs-root",
          dir_ + "/proc",         "--pool-control-file",   dir_ + "/cpu/pools.json",
          "--state-dir",          dir_ + "/state",         "--socket",
          dir_ + "/advisor.sock", "--socket-allowed-uids", std::to_string(::getuid())};
}

namespace {

// Empty when sample `c` is what container c.index used at `second`, else what differs.
std::string CheckSample(const FakeNode& node, const SampledContainer& c, int64_t second,
                        int64_t memory_second) {
  if (c.index >= node.containers().size()) return fmt::format("sample of container {}", c.index);
  const std::string& key = node.containers()[c.index].tracked.Key();
  if (c.key != key) return fmt::format("sample {} is {}, not {}", c.index, c.key, key);
  const double cores = node.Cores(c.index, second);
  if (second > 1 && (!c.cpu || std::abs(*c.cpu - cores) > 1e-6)) {
    return fmt::format("{}: cpu {} cores sampled, {} used", key,
                       c.cpu ? fmt::format("{:.9f}", *c.cpu) : "no", cores);
  }
  if (c.memory != static_cast<double>(node.WorkingSet(c.index, memory_second))) {
    return fmt::format("{}: working set {} sampled, {} written", key, c.memory,
                       node.WorkingSet(c.index, memory_second));
  }
  return "";
}

}  // namespace

std::string CheckSamples(const FakeNode& node, const std::vector<SampledContainer>& samples,
                         std::optional<double> node_cpu, int64_t second, int64_t memory_second) {
  if (samples.size() != node.containers().size()) {
    return fmt::format("second {}: {} containers sampled, {} run", second, samples.size(),
                       node.containers().size());
  }
  for (const SampledContainer& c : samples) {
    if (std::string e = CheckSample(node, c, second, memory_second); !e.empty()) {
      return fmt::format("second {}: {}", second, e);
    }
  }
  // /proc/stat counts whole 10 ms ticks: the node's rate is exact to 0.01 core.
  if (second > 1 && (!node_cpu || std::abs(*node_cpu - node.NodeCores(second)) > 0.011)) {
    return fmt::format("second {}: node cpu {} sampled, {:.3f} used", second,
                       node_cpu ? fmt::format("{:.3f}", *node_cpu) : "no", node.NodeCores(second));
  }
  return "";
}

std::vector<SampledContainer> LastTickSamples(const qa::Agent& agent,
                                              std::optional<double>& node_cpu) {
  return agent.Read([&](const qa::AgentState& s, auto&&...) {
    std::vector<SampledContainer> out;
    for (const qa::ContainerSample& c : s.last_tick.containers) {
      out.push_back({c.index, s.containers.at(c.index).Key(), c.cpu, c.memory});
    }
    node_cpu = s.last_tick.node_cpu;
    return out;
  });
}

StatusOr<qrm::advisor_cmd::DaemonConfig> DaemonConfigFor(const FakeNode& node,
                                                         const std::vector<std::string>& extra) {
  std::vector<std::string> args = node.DaemonArgs();
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<const char*> argv{"qrm-advisor"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  qrm::advisor_cmd::DaemonFlags flags;
  auto parsed = config::Parse(static_cast<int>(argv.size()), argv.data(), flags.description());
  if (!parsed.ok()) return parsed.status();
  return flags.Finish();
}

}  // namespace qrm::bench::advisor
