#include "cluster/drain/synthetic_cluster.h"

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cluster/drain/drainability.h"
#include "cluster/drain/numa_admission.h"
#include "cluster/drain/simulation.h"
#include "common/protocol_keys.h"

namespace qrm::cluster::drain {
namespace {

constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;
// Every zone: 16 CPUs and 64 GiB (4 GiB per CPU, a common cloud shape).
constexpr int64_t kZoneCpuMilli = 16000;
constexpr int64_t kZoneMemory = 64 * kGi;
constexpr int64_t kMemoryPerCpu = 4 * kGi;
// The largest NUMA-bound pod: half a zone, so that one zone can hold it beside others.
constexpr int64_t kMaxBoundCpuMilli = kZoneCpuMilli / 2;
// Pods per application, on average (the pool sizes below follow from it).
constexpr double kPodsPerApp = 20;
constexpr const char* kZoneLabel = "topology.kubernetes.io/zone";
// Every 50th node that runs applications also runs one CoreDNS replica.
constexpr size_t kCoreDnsEvery = 50;
constexpr int32_t kSystemNodeCritical = 2'000'001'000;

// Uniform draws from std::mt19937_64, whose sequence the standard fixes.
class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  // [0, 1) from the top 53 bits.
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double Between(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  bool Chance(double p) { return Uniform() < p; }
  // [0, n); the modulo bias is far below anything a test could see.
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : engine_() % n; }

 private:
  std::mt19937_64 engine_;
};

// A Deployment's ReplicaSet: its pods share labels, QoS and volumes.
struct App {
  std::string namespace_;
  std::string name;               // the `app` label
  std::string hash;               // pod-template-hash
  bool numa_bound = false;        // dedicated_cores + numa_binding
  bool numa_exclusive = false;    // ... and numa_exclusive
  bool shared_annotated = false;  // qos_level shared_cores written (else none: shared too)
  bool sidecar = false;
  bool init_container = false;
  bool memory_volume = false;  // emptyDir on tmpfs: no local-storage block
  bool disk_volume = false;    // emptyDir on disk: blocks unless declared safe to evict
  bool disk_safe = false;      // ... declared so
  bool claim = false;          // a PersistentVolumeClaim
  int64_t zone_max_skew = 0;   // > 0: a DoNotSchedule zone spread constraint
  bool anti_affine = false;    // replicas never share a node
  std::string ReplicaSet() const { return name + "-" + hash; }
};

struct NodeShape {
  int zones = 2;
  topology::Policy policy = topology::Policy::kNone;
  double fill = 0;         // the share of its CPU the node's pods request
  double bound_share = 0;  // the chance an application pod is NUMA-bound
  bool empty = false;
};

App MakeApp(Random& rng, bool bound, size_t index) {
  App app;
  app.namespace_ = fmt::format("team-{}", index % 10);
  app.name = fmt::format("{}-{}", bound ? "db" : "web", index);
  app.hash = fmt::format("{:08x}", static_cast<uint32_t>(rng.Below(1ULL << 32)));
  app.numa_bound = bound;
  app.shared_annotated = !bound && rng.Chance(0.5);
  app.sidecar = !bound && rng.Chance(0.3);
  app.init_container = rng.Chance(0.2);
  app.memory_volume = rng.Chance(0.1);
  app.disk_volume = rng.Chance(0.01);
  app.disk_safe = app.disk_volume && rng.Chance(0.5);
  app.claim = rng.Chance(0.03);
  return app;
}

// Whether item i of a list gets a feature a `fraction` of the items have, evenly spread and
// without drawing a random number (so the rest of the cluster does not change with it).
bool EvenShare(size_t i, double fraction) {
  const double f = std::clamp(fraction, 0.0, 1.0);
  return static_cast<size_t>(static_cast<double>(i + 1) * f) !=
         static_cast<size_t>(static_cast<double>(i) * f);
}

std::vector<App> MakeApps(Random& rng, size_t count, bool bound, size_t first_index,
                          const SyntheticClusterOptions& o) {
  std::vector<App> apps;
  for (size_t i = 0; i < count; ++i) {
    App& app = apps.emplace_back(MakeApp(rng, bound, first_index + i));
    if (!bound && EvenShare(i, o.spread_fraction))
      app.zone_max_skew = 2 + static_cast<int64_t>(i % 2);
    if (bound) app.anti_affine = EvenShare(i, o.anti_affinity_fraction);
    if (bound) app.numa_exclusive = EvenShare(i, o.exclusive_fraction);
  }
  return apps;
}

// The inter-pod rules of the app's pods: zone spread, hostname anti-affinity.
void AppInterPodRules(DrainPod& pod, const App& app) {
  const LabelSelector own{{{"app", app.name}}, {}};
  if (app.zone_max_skew > 0) {
    TopologySpreadConstraint c;
    c.max_skew = app.zone_max_skew;
    c.topology_key = kZoneLabel;
    c.when_unsatisfiable = "DoNotSchedule";
    c.selector = own;
    c.match_label_keys = {"pod-template-hash"};
    pod.spread.push_back(std::move(c));
  }
  if (app.anti_affine) {
    PodAffinityTerm term;
    term.selector = own;
    term.topology_key = "kubernetes.io/hostname";
    pod.pod_anti_affinity.push_back(std::move(term));
  }
}

NodeShape DrawShape(Random& rng, const SyntheticClusterOptions& o) {
  NodeShape s;
  s.zones = rng.Chance(o.four_numa_fraction) ? 4 : 2;
  const double u = rng.Uniform();
  s.policy = u < 0.4   ? topology::Policy::kSingleNumaNode
             : u < 0.6 ? topology::Policy::kRestricted
             : u < 0.8 ? topology::Policy::kBestEffort
                       : topology::Policy::kNone;
  s.fill = std::min(o.fill * rng.Between(0.4, 1.6), 0.95);
  // single-numa-node nodes (40 %) hold about twice the mean, the others a third of it: the
  // overall share stays near numa_bound_fraction.
  const double factor = s.policy == topology::Policy::kSingleNumaNode ? 2.0 : 1.0 / 3.0;
  s.bound_share = std::min(o.numa_bound_fraction * factor, 1.0);
  s.empty = rng.Chance(o.empty_fraction);
  return s;
}

std::vector<std::vector<uint32_t>> Distances(int zones) {
  if (zones == 2) return {{10, 21}, {21, 10}};
  return {{10, 12, 20, 22}, {12, 10, 22, 20}, {20, 22, 10, 12}, {22, 20, 12, 10}};
}

NumaNodeState MakeState(const std::string& node, const NodeShape& shape) {
  std::vector<NumaZone> zones;
  for (int id = 0; id < shape.zones; ++id) {
    NumaZone z;
    z.id = id;
    z.cpu_milli = {kZoneCpuMilli, kZoneCpuMilli};
    z.memory_bytes = {kZoneMemory, kZoneMemory};
    z.binding.known = true;  // as qrm-advisor's zone attributes say
    zones.push_back(z);
  }
  // The zones are well formed by construction, so this cannot fail.
  return *MakeNumaNodeState(node, std::move(zones), shape.policy, topology::Scope::kContainer,
                            Distances(shape.zones));
}

DrainNode MakeNode(size_t index, const NodeShape& shape) {
  DrainNode node;
  node.name = fmt::format("node-{:05}", index);
  const std::string pool = fmt::format("numa-{}", shape.zones);
  const std::string group = fmt::format("{}-{}", pool, index % 4);
  node.labels = {{"kubernetes.io/hostname", node.name},
                 {"kubernetes.io/os", "linux"},
                 {kZoneLabel, fmt::format("zone-{}", index % kSyntheticZones)},
                 {"pool", pool},
                 {kSyntheticNodeGroupLabel, group}};
  node.node_group = group;
  node.allocatable.cpu_milli = kZoneCpuMilli * shape.zones;
  node.allocatable.memory_bytes = kZoneMemory * shape.zones;
  node.allocatable_pods = 110;
  return node;
}

Resources Sum(const std::vector<ContainerRequests>& containers) {
  Resources r;
  for (const ContainerRequests& c : containers) {
    r.cpu_milli += c.requests.cpu_milli;
    r.memory_bytes += c.requests.memory_bytes;
  }
  return r;
}

// The decoder's effective request: max(sum of containers, max of init containers).
Resources EffectiveRequests(const DrainPod& pod) {
  Resources r = Sum(pod.containers);
  for (const ContainerRequests& c : pod.init_containers) {
    r.cpu_milli = std::max(r.cpu_milli, c.requests.cpu_milli);
    r.memory_bytes = std::max(r.memory_bytes, c.requests.memory_bytes);
  }
  return r;
}

// What real pods carry besides their own choices.
void CommonPodFields(DrainPod& pod, Random& rng, const SyntheticClusterOptions& o) {
  pod.phase = "Running";
  pod.creation_time = o.now - 3600 * static_cast<int64_t>(2 + rng.Below(24 * 30));
  pod.node_selector = {{"kubernetes.io/os", "linux"}};
  pod.tolerations = {{"node.kubernetes.io/not-ready", "Exists", "", "NoExecute"},
                     {"node.kubernetes.io/unreachable", "Exists", "", "NoExecute"}};
  pod.volumes.push_back({"kube-api-access", VolumeKind::kOther, "", ""});
}

DrainPod DaemonSetPod(const std::string& ns, const std::string& ds, const DrainNode& node,
                      int64_t cpu_milli, int64_t memory, Random& rng,
                      const SyntheticClusterOptions& o) {
  DrainPod pod;
  pod.namespace_ = ns;
  pod.name = ds + "-" + node.name;
  pod.node_name = node.name;
  pod.labels = {{"app", ds}};
  pod.owners = {{"DaemonSet", ds, true}};
  pod.priority = kSystemNodeCritical;
  CommonPodFields(pod, rng, o);
  pod.tolerations = {{"", "Exists", "", ""}};  // daemonsets tolerate every taint
  pod.volumes.push_back({"host", VolumeKind::kHostPath, "", ""});
  pod.containers = {{ds, {cpu_milli, memory, {}}}};
  pod.requests = EffectiveRequests(pod);
  return pod;
}

// The CPU and memory one application pod requests, given its share of the node's target.
void SizeAppPod(DrainPod& pod, const App& app, int64_t share_milli, Random& rng) {
  int64_t cpu = 0;
  if (app.numa_bound) {  // whole CPUs, as dedicated_cores are allocated
    cpu = std::clamp<int64_t>((share_milli + 500) / 1000 * 1000, 1000, kMaxBoundCpuMilli);
  } else {
    cpu = std::max<int64_t>(share_milli / 10 * 10, 50);
  }
  const auto memory =
      static_cast<int64_t>(static_cast<double>(cpu) / 1000.0 * static_cast<double>(kMemoryPerCpu) *
                           rng.Between(0.3, 0.9)) /
      kMi * kMi;
  if (app.init_container) pod.init_containers = {{"init", {100, 64 * kMi, {}}}};
  if (app.sidecar && cpu > 100) {
    pod.containers = {{"app", {cpu - 50, memory, {}}}, {"sidecar", {50, 64 * kMi, {}}}};
  } else {
    pod.containers = {{"app", {cpu, std::max(memory, 64 * kMi), {}}}};
  }
  pod.requests = EffectiveRequests(pod);
}

void AppAnnotations(DrainPod& pod, const App& app) {
  if (app.numa_bound) {
    pod.annotations[std::string(kQosLevelKey)] = "dedicated_cores";
    pod.annotations[std::string(kMemoryEnhancementKey)] =
        app.numa_exclusive ? R"({"numa_binding":"true","numa_exclusive":"true"})"
                           : R"({"numa_binding":"true"})";
    pod.qos_level = "dedicated_cores";
    pod.numa_binding = true;
    pod.numa_exclusive = app.numa_exclusive;
  } else if (app.shared_annotated) {
    pod.annotations[std::string(kQosLevelKey)] = "shared_cores";
    pod.qos_level = "shared_cores";
  }
  if (app.disk_safe) {
    pod.annotations[std::string(kSafeToEvictLocalVolumesAnnotation)] = "scratch";
  }
}

void AppVolumes(DrainPod& pod, const App& app, uint64_t serial) {
  if (app.memory_volume) pod.volumes.push_back({"shm", VolumeKind::kEmptyDir, "Memory", ""});
  if (app.disk_volume) pod.volumes.push_back({"scratch", VolumeKind::kEmptyDir, "", ""});
  if (app.claim) {
    pod.volumes.push_back({"data", VolumeKind::kPersistentVolumeClaim, "",
                           fmt::format("{}-data-{}", app.name, serial)});
  }
}

DrainPod AppPod(const App& app, const DrainNode& node, int64_t share_milli, uint64_t serial,
                Random& rng, const SyntheticClusterOptions& o) {
  DrainPod pod;
  pod.namespace_ = app.namespace_;
  pod.name = fmt::format("{}-{:05x}", app.ReplicaSet(), serial);
  pod.node_name = node.name;
  pod.labels = {{"app", app.name}, {"pod-template-hash", app.hash}};
  pod.owners = {{"ReplicaSet", app.ReplicaSet(), true}};
  pod.priority = app.numa_bound ? 1000 : 0;
  if (rng.Chance(0.5)) pod.grace_period_seconds = 30;
  CommonPodFields(pod, rng, o);
  AppAnnotations(pod, app);
  AppVolumes(pod, app, serial);
  if (app.numa_bound) {
    SelectorRequirement pool{"pool", SelectorOp::kIn, "In", {"numa-2", "numa-4"}};
    pod.required_affinity = {{{pool}}};
  }
  AppInterPodRules(pod, app);
  SizeAppPod(pod, app, share_milli, rng);
  return pod;
}

// Admits and places the pod on the node's state as qrm would; false when qrm would refuse it,
// or would spread a NUMA-bound pod over more than one zone.
bool AdmitOnNode(NumaNodeState& state, const DrainPod& pod) {
  StatusOr<NumaPlacement> placement = Admit(state, NumaRequestOf(pod));
  if (!placement.ok() || !placement->admitted) return false;
  if (pod.numa_binding && placement->nodes.Count() != 1) return false;
  return Place(state, *placement).ok();
}

// The cluster being generated: nodes in index order, each with its pods as they are admitted.
class Generator {
 public:
  explicit Generator(const SyntheticClusterOptions& o) : o_(o), rng_(o.seed) {}

  SyntheticCluster Run() {
    MakeAppPools();
    for (size_t i = 0; i < o_.nodes; ++i) AddNode(i);
    AddPdbs();
    out_.snapshot.claims_listed = true;
    out_.snapshot.volumes_listed = true;
    out_.snapshot.Reindex();
    return std::move(out_);
  }

 private:
  // Pools sized for about kPodsPerApp pods per application.
  void MakeAppPools() {
    const int app_pods = std::max(o_.pods_per_node - 2, 0);
    const double total = static_cast<double>(o_.nodes) * app_pods;
    const double bound = std::clamp(o_.numa_bound_fraction, 0.0, 1.0);
    const auto count = [](double pods) {
      return std::max<size_t>(1, static_cast<size_t>(pods / kPodsPerApp));
    };
    bound_apps_ = MakeApps(rng_, count(total * bound), true, 0, o_);
    shared_apps_ = MakeApps(rng_, count(total * (1 - bound)), false, bound_apps_.size(), o_);
    coredns_.namespace_ = "kube-system";
    coredns_.name = "coredns";
    coredns_.hash = "5d78c9869d";
  }

  void AddNode(size_t index) {
    const NodeShape shape = DrawShape(rng_, o_);
    DrainNode node = MakeNode(index, shape);
    zone_ = node.labels.at(kZoneLabel);
    NumaNodeState state = MakeState(node.name, shape);
    const int daemonsets = std::min(o_.pods_per_node, 2);
    if (daemonsets > 0) {
      Add(state, DaemonSetPod("kube-system", "kube-proxy", node, 100, 128 * kMi, rng_, o_));
    }
    if (daemonsets > 1) {
      Add(state, DaemonSetPod("monitoring", "node-exporter", node, 50, 64 * kMi, rng_, o_));
    }
    if (!shape.empty) AddAppPods(node, shape, o_.pods_per_node - daemonsets, state);
    // A tenth of the nodes can attach no more EBS volumes; no random number is drawn, so the
    // rest of the cluster is the same as without.
    const int64_t room = index % 10 == 0 ? 0 : 2;
    out_.snapshot.csi_nodes[node.name] = {node.name, {{kSyntheticCsiDriver, node_volumes_ + room}}};
    node_volumes_ = 0;
    out_.numa.emplace(node.name, std::move(state));
    out_.snapshot.nodes.push_back(std::move(node));
  }

  void AddAppPods(const DrainNode& node, const NodeShape& shape, int count, NumaNodeState& state) {
    if (count <= 0) return;
    std::vector<double> weights;
    double sum = 0;
    for (int i = 0; i < count; ++i) sum += weights.emplace_back(rng_.Between(0.5, 1.5));
    const double target = shape.fill * static_cast<double>(node.allocatable.cpu_milli) - 150;
    const bool coredns = ++app_nodes_ % kCoreDnsEvery == 0;
    std::set<std::string> anti_affine_here;  // the scheduler would not put a second one here
    for (int i = 0; i < count; ++i) {
      const App& app = coredns && i == 0 ? coredns_ : PickApp(shape, anti_affine_here);
      if (app.anti_affine) anti_affine_here.insert(app.name);
      const auto share = static_cast<int64_t>(std::max(target, 0.0) * weights[i] / sum);
      Add(state, AppPod(app, node, share, serial_++, rng_, o_));
    }
  }

  // An app for the next pod of a node; an anti-affine app already there is drawn again, and
  // after a few tries a shared app is taken.
  const App& PickApp(const NodeShape& shape, const std::set<std::string>& anti_affine_here) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      const std::vector<App>& pool = rng_.Chance(shape.bound_share) ? bound_apps_ : shared_apps_;
      const App& app = pool[rng_.Below(pool.size())];
      if (!app.anti_affine || !anti_affine_here.contains(app.name)) return app;
    }
    return shared_apps_[rng_.Below(shared_apps_.size())];
  }

  void Add(NumaNodeState& state, DrainPod pod) {
    if (!AdmitOnNode(state, pod)) {
      ++out_.refused;
      return;
    }
    if (const OwnerReference* c = pod.Controller(); c != nullptr && c->kind == "ReplicaSet") {
      ++out_.snapshot.controller_replicas[pod.namespace_ + "/ReplicaSet/" + c->name];
    }
    pod.uid = fmt::format("00000000-0000-4000-8000-{:012x}", out_.snapshot.pods.size());
    AddZonalVolumes(pod);
    out_.snapshot.pods.push_back(std::move(pod));
  }

  // Each claim of the pod, bound to a volume in the zone of the node it runs on (a cloud
  // disk: the pod can only move within its zone).
  void AddZonalVolumes(const DrainPod& pod) {
    for (const Volume& v : pod.volumes) {
      if (v.kind != VolumeKind::kPersistentVolumeClaim) continue;
      const std::string pv = "pv-" + v.claim;
      out_.snapshot.claims[pod.namespace_ + "/" + v.claim] = {pod.namespace_, v.claim, pv, ""};
      out_.snapshot.volumes[pv] = {
          pv, {{kZoneLabel, zone_}}, {}, {kSyntheticCsiDriver, "vol-" + v.claim, false}};
      ++node_volumes_;
    }
  }

  // CoreDNS's budget first (kube-system pods without one block their node for an hour after
  // they start), then budgets spread evenly over the applications.
  void AddPdbs() {
    if (o_.pdbs <= 0) return;
    out_.snapshot.pdbs.push_back(
        {"kube-system", "coredns", LabelSelector{{{"app", "coredns"}}, {}}, 1});
    std::vector<const App*> apps;
    for (const auto* pool : {&bound_apps_, &shared_apps_}) {
      for (const App& a : *pool) apps.push_back(&a);
    }
    const size_t n = std::min<size_t>(static_cast<size_t>(o_.pdbs - 1), apps.size());
    for (size_t i = 0; i < n; ++i) {
      const App& app = *apps[i * apps.size() / n];
      LabelSelector selector;
      if (i % 7 == 3) {  // some budgets select with an expression instead
        selector.match_expressions = {{"app", SelectorOp::kIn, "In", {app.name}}};
      } else {
        selector.match_labels = {{"app", app.name}};
      }
      const int64_t allowed = rng_.Chance(0.1) ? 0 : 1 + static_cast<int64_t>(rng_.Below(4));
      out_.snapshot.pdbs.push_back({app.namespace_, app.name, std::move(selector), allowed});
    }
  }

  SyntheticClusterOptions o_;
  Random rng_;
  std::vector<App> bound_apps_, shared_apps_;
  App coredns_;
  size_t app_nodes_ = 0;
  uint64_t serial_ = 0;
  std::string zone_;          // of the node being filled
  int64_t node_volumes_ = 0;  // the claims of its pods (each its own volume)
  SyntheticCluster out_;
};

}  // namespace

SyntheticCluster GenerateCluster(const SyntheticClusterOptions& options) {
  return Generator(options).Run();
}

}  // namespace qrm::cluster::drain
