#include "cluster/drain/numa_admission.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cluster/drain/numa_hints.h"
#include "cluster/drain/saturating.h"
#include "qrm/topology/policy_names.h"

namespace qrm::cluster::drain {
namespace {

using topology::TopologyHint;
using Takes = std::map<int, ZoneTake>;  // by zone

// One resource of an admission unit (a container, or the whole pod for scope pod).
struct Need {
  std::string resource;
  int64_t amount = 0;
  bool hinted = false;  // false: taken from the shared pool, node totals
  PreferRule rule = PreferRule::kNarrowestFree;
  bool whole_cpus = false;
  bool dedicated_cpus = false;  // dedicated_cores CPUs (counted in the zone's binding)
  bool all_of_zones = false;    // numa_exclusive CPUs: every whole free CPU of the zones
  bool bound = false;           // NUMA-bound: only zones BindableZones allows
};

// What is admitted at once: a container, or the pod (scope pod).
struct Unit {
  std::string name;
  std::map<std::string, int64_t> amounts;
};

bool ZonesList(const NumaNodeState& state, const std::string& resource) {
  return std::any_of(state.zones.begin(), state.zones.end(),
                     [&](const NumaZone& z) { return ZoneAmount(z, resource).capacity > 0; });
}

bool Dedicated(const NumaPodRequest& pod) {
  return pod.qos == NumaQos::kDedicated;
}

// NUMA-bound as qrm's plugins read it: numa_binding or numa_exclusive, on a level that binds.
bool Bound(const NumaPodRequest& pod) {
  return (pod.numa_binding || pod.numa_exclusive) &&
         (Dedicated(pod) || pod.qos == NumaQos::kShared);
}

std::vector<Need> Needs(const NumaNodeState& state, const NumaPodRequest& pod, const Unit& unit) {
  const bool dedicated = Dedicated(pod);
  const bool bound = Bound(pod);
  std::vector<Need> needs;
  for (const auto& [resource, amount] : unit.amounts) {
    if (amount == 0) continue;
    Need need{resource, amount};
    if (resource == "cpu") {
      need.hinted = dedicated;
      need.whole_cpus = dedicated;
      need.dedicated_cpus = dedicated;
      need.all_of_zones = dedicated && bound && pod.numa_exclusive;
      need.bound = dedicated && bound;
      if (dedicated) need.amount = SatAdd(amount, 999) / 1000 * 1000;
      need.rule = bound ? PreferRule::kNarrowestFree : PreferRule::kNarrowestCapacity;
    } else if (resource == "memory") {
      need.hinted = bound;
      need.bound = bound;
    } else if (!ZonesList(state, resource)) {
      continue;  // not a resource qrm accounts per NUMA zone
    } else {
      need.hinted = true;
    }
    needs.push_back(std::move(need));
  }
  return needs;
}

std::string Amount(const std::string& resource, int64_t amount) {
  if (resource == "cpu") return fmt::format("{}m cpu", amount);
  return fmt::format("{} {}", amount, resource);
}

void Take(NumaZone& zone, const Need& need, int64_t amount, Takes& takes) {
  MutableZoneAmount(zone, need.resource).free -= amount;
  ZoneTake& take = takes[zone.id];
  take.zone = zone.id;
  take.amounts[need.resource] += amount;
  if (need.dedicated_cpus) take.dedicated_cpu_milli += amount;
}

// Fills the zones of `mask` in ascending id order (all of them for all_of_zones).
Status TakeFrom(NumaNodeState& work, const Need& need, NumaMask mask, Takes& takes) {
  int64_t free = 0;
  for (const NumaZone& z : work.zones) {
    if (mask.Has(z.id)) free = SatAdd(free, UsableFree(z, need.resource, need.whole_cpus));
  }
  if (free < need.amount) {
    return ResourceExhaustedError(
        fmt::format("{} must come from NUMA node(s) {}, which have {} free",
                    Amount(need.resource, need.amount), mask.ToString(), free));
  }
  int64_t left = need.all_of_zones ? free : need.amount;
  for (NumaZone& z : work.zones) {
    if (!mask.Has(z.id) || left == 0) continue;
    const int64_t take = std::min(left, UsableFree(z, need.resource, need.whole_cpus));
    Take(z, need, take, takes);
    left -= take;
  }
  return Status::Ok();
}

// The role of a pod bound to the zone among its roles, if it has one.
void AddRole(ZoneBinding& b, const std::string& role) {
  if (role.empty()) return;
  auto at = std::lower_bound(b.roles.begin(), b.roles.end(), role);
  if (at == b.roles.end() || *at != role) b.roles.insert(at, role);
}

// The pod's NUMA-bound containers are bound to `mask`, recorded for Place. The working state's
// bindings stay as they were: the plugins never keep a pod's containers away from each other
// (the memory plugin skips the pod's own; the CPU plugin's own claims only matter to an
// exclusive pod, whose first container took every CPU there anyway).
void Bind(const NumaPodRequest& pod, NumaMask mask, Takes& takes) {
  for (int zone : mask.Nodes()) {
    ZoneTake& take = takes[zone];
    take.zone = zone;
    take.binds = true;
    take.role = pod.role;
    take.exclusive = take.exclusive || pod.numa_exclusive;
  }
}

// A role bound to the zone that the pod's role is NUMA anti-affine with, or "".
std::string AntiAffineRole(const ZoneBinding& b, const NumaPodRequest& pod) {
  if (pod.role.empty()) return "";
  for (const std::string& r : b.roles) {
    const bool listed = std::find(pod.anti_affine_roles.begin(), pod.anti_affine_roles.end(), r) !=
                        pod.anti_affine_roles.end();
    if (listed || (pod.anti_affine_to_all_roles && r != pod.role)) return r;
  }
  return "";
}

// Why a NUMA-bound pod may not be bound to `zone`, or "" when it may.
std::string Unbindable(const NumaZone& zone, const NumaPodRequest& pod) {
  const ZoneBinding& b = zone.binding;
  if (b.exclusive) return "held exclusively";
  if (std::string r = AntiAffineRole(b, pod); !r.empty()) {
    return fmt::format("role \"{}\" is NUMA anti-affine with role \"{}\" bound there", pod.role, r);
  }
  if (!pod.numa_exclusive) return "";
  if (!b.known) return "its NodeResourceTopology does not say who is NUMA-bound there";
  if (b.bound_pods > 0) return fmt::format("{} NUMA-bound pod(s) there", b.bound_pods);
  if (Dedicated(pod) && b.dedicated_cpu_milli > 0) {
    return fmt::format("{}m dedicated CPU held there", b.dedicated_cpu_milli);
  }
  return "";
}

// The zones the pod's NUMA-bound resources may come from, and why the others may not.
NumaMask BindableZones(const NumaNodeState& state, const NumaPodRequest& pod,
                       std::string* why_not) {
  NumaMask allowed;
  std::vector<std::string> reasons;
  for (const NumaZone& z : state.zones) {
    const std::string reason = Unbindable(z, pod);
    if (reason.empty()) {
      allowed = allowed.With(z.id);
    } else {
      reasons.push_back(fmt::format("NUMA node {}: {}", z.id, reason));
    }
  }
  if (!reasons.empty()) {
    *why_not = fmt::format(" (excluded for a NUMA-bound{} pod: {})",
                           pod.numa_exclusive ? ", exclusive" : "", fmt::join(reasons, "; "));
  }
  return allowed;
}

// The shared pool spans the zones of `within` (every zone, or a NUMA-bound pod's own): takes in
// proportion to each one's free amount. A bound pod whose zones lack it runs on the whole pool,
// as the CPU plugin does when dedicated containers took every shared CPU there.
Status TakeFromPool(NumaNodeState& work, const Need& need, NumaMask within, Takes& takes) {
  auto free = [&](const NumaZone& z) {
    return within.Has(z.id) ? ZoneAmount(z, need.resource).free : 0;
  };
  int64_t total = 0;
  for (const NumaZone& z : work.zones) total = SatAdd(total, free(z));
  if (total < need.amount && within != work.AllZones()) {
    return TakeFromPool(work, need, work.AllZones(), takes);
  }
  if (total < need.amount) {
    return ResourceExhaustedError(fmt::format("{} requested, the node has {} free",
                                              Amount(need.resource, need.amount), total));
  }
  int64_t left = need.amount;
  std::vector<int64_t> share;
  for (const NumaZone& z : work.zones) {
    const long double part = static_cast<long double>(need.amount) *
                             static_cast<long double>(free(z)) /
                             static_cast<long double>(std::max<int64_t>(total, 1));
    share.push_back(std::min(left, static_cast<int64_t>(part)));
    left -= share.back();
  }
  for (size_t i = 0; i < work.zones.size(); ++i) {  // the rounding remainder, lowest ids first
    const int64_t extra = std::min(left, std::max<int64_t>(free(work.zones[i]) - share[i], 0));
    share[i] += extra;
    left -= extra;
  }
  for (size_t i = 0; i < work.zones.size(); ++i) {
    if (share[i] > 0) Take(work.zones[i], need, share[i], takes);
  }
  return Status::Ok();
}

// The zones a hinted resource comes from: the merged affinity, else (no hint given to the
// plugin) its own first preferred hint, else its first hint.
std::optional<NumaMask> Where(const std::optional<NumaMask>& affinity,
                              const std::vector<TopologyHint>& hints) {
  if (affinity) return affinity;
  for (const TopologyHint& h : hints) {
    if (h.preferred) return h.affinity;
  }
  if (!hints.empty()) return hints.front().affinity;
  return std::nullopt;
}

struct UnitResult {
  bool admitted = false;
  Refusal refusal = Refusal::kNone;
  std::string message;
  std::optional<NumaMask> affinity;
  NumaMask used;
  NumaMask bound_to;  // the zones its NUMA-bound resources came from
};

UnitResult Refuse(Refusal refusal, std::string message) {
  UnitResult r;
  r.refusal = refusal;
  r.message = std::move(message);
  return r;
}

// Where a NUMA-bound pod may be bound, and why not elsewhere (for refusals).
struct Bindable {
  NumaMask zones;
  std::string excluded;
};

// Takes one hinted need from its zones: the merged affinity, else its own hint.
Status TakeHinted(NumaNodeState& work, const Need& need, const std::vector<TopologyHint>& hints,
                  const Bindable& bindable, UnitResult& result, Takes& takes) {
  const std::optional<NumaMask> mask = Where(result.affinity, hints);
  if (!mask) {
    return ResourceExhaustedError(fmt::format("{}: no set of NUMA nodes has it free{}",
                                              Amount(need.resource, need.amount),
                                              need.bound ? bindable.excluded : ""));
  }
  result.used = result.used.Or(*mask);
  if (!need.bound) return TakeFrom(work, need, *mask, takes);
  // The merged affinity may be wider than a bound resource's hints allow (policy none or
  // best-effort); the plugin would refuse those zones.
  if (!mask->IsSubsetOf(bindable.zones)) {
    return ResourceExhaustedError(fmt::format("{} must come from NUMA node(s) {}{}",
                                              Amount(need.resource, need.amount), mask->ToString(),
                                              bindable.excluded));
  }
  result.bound_to = result.bound_to.Or(*mask);
  return TakeFrom(work, need, *mask, takes);
}

// Takes every need: the hinted ones first (they bind a NUMA-bound pod), then the pool's; a
// bound pod's from the zones it is bound to (the CPU plugin runs a NUMA-bound shared container
// on its nodes' shared CPUs).
Status TakeNeeds(NumaNodeState& work, const std::vector<Need>& needs,
                 const std::vector<std::vector<TopologyHint>>& hints, const Bindable& bindable,
                 UnitResult& result, Takes& takes) {
  for (size_t i = 0; i < needs.size(); ++i) {
    if (needs[i].hinted) {
      QRM_RETURN_IF_ERROR(TakeHinted(work, needs[i], hints[i], bindable, result, takes));
    }
  }
  const NumaMask pool = result.bound_to.empty() ? work.AllZones() : result.bound_to;
  for (const Need& need : needs) {
    if (!need.hinted) QRM_RETURN_IF_ERROR(TakeFromPool(work, need, pool, takes));
  }
  return Status::Ok();
}

StatusOr<UnitResult> AdmitUnit(NumaNodeState& work, const NumaPodRequest& pod, const Unit& unit,
                               Takes& takes) {
  const std::vector<Need> needs = Needs(work, pod, unit);
  Bindable bindable{work.AllZones(), ""};
  if (Bound(pod)) bindable.zones = BindableZones(work, pod, &bindable.excluded);
  std::vector<std::vector<TopologyHint>> hints(needs.size());
  topology::ProvidersHints providers;
  for (size_t i = 0; i < needs.size(); ++i) {
    if (!needs[i].hinted) continue;
    const Need& n = needs[i];
    hints[i] = ResourceHints(work, n.resource, n.amount, n.rule, n.whole_cpus,
                             n.bound ? bindable.zones : work.AllZones());
    providers.push_back({{n.resource, hints[i]}});
  }
  UnitResult result;
  result.admitted = true;
  if (!providers.empty() && work.policy != topology::Policy::kNone) {
    QRM_ASSIGN_OR_RETURN(topology::MergeResult merged,
                         topology::Merge(work.policy, work.options, *work.numa_info, providers));
    if (!merged.admit) {
      return Refuse(Refusal::kTopologyAffinity,
                    fmt::format("{} (policy {}, best hint {}){}", kTopologyAffinityErrorMessage,
                                topology::PolicyName(work.policy), merged.best.ToString(),
                                bindable.excluded));
    }
    result.affinity = merged.best.affinity;
  }
  if (Status taken = TakeNeeds(work, needs, hints, bindable, result, takes); !taken.ok()) {
    return Refuse(Refusal::kOutOfResources, taken.message());
  }
  Bind(pod, result.bound_to, takes);
  return result;
}

Status CheckRequest(const NumaPodRequest& pod, const NumaContainerRequest& c) {
  std::map<std::string, int64_t> all = c.extended;
  all["cpu"] = c.cpu_milli;
  all["memory"] = c.memory_bytes;
  for (const auto& [resource, amount] : all) {
    if (amount < 0) {
      return InvalidArgumentError(fmt::format("pod {} container {}: negative request {} for {}",
                                              pod.pod, c.name, amount, resource));
    }
  }
  return Status::Ok();
}

Unit UnitOf(const NumaContainerRequest& c) {
  Unit unit{c.name, c.extended};
  unit.amounts["cpu"] = c.cpu_milli;
  unit.amounts["memory"] = c.memory_bytes;
  return unit;
}

// Scope pod: per resource the larger of the biggest init container and the app containers' sum.
Unit PodUnit(const NumaPodRequest& pod) {
  Unit sum{"(pod)", {}};
  for (const NumaContainerRequest& c : pod.containers) {
    for (const auto& [resource, amount] : UnitOf(c).amounts) {
      sum.amounts[resource] = SatAdd(sum.amounts[resource], amount);
    }
  }
  for (const NumaContainerRequest& c : pod.init_containers) {
    for (const auto& [resource, amount] : UnitOf(c).amounts) {
      sum.amounts[resource] = std::max(sum.amounts[resource], amount);
    }
  }
  return sum;
}

NumaPlacement Refused(const NumaNodeState& state, const NumaPodRequest& pod, const Unit& unit,
                      const UnitResult& r) {
  NumaPlacement p;
  p.refusal = r.refusal;
  p.reason =
      r.refusal == Refusal::kTopologyAffinity ? kTopologyAffinityErrorReason : "OutOfResources";
  p.message =
      fmt::format("node {} pod {} container {}: {}", state.node, pod.pod, unit.name, r.message);
  return p;
}

std::vector<ZoneTake> ZoneTakes(const Takes& takes) {
  std::vector<ZoneTake> out;
  for (const auto& entry : takes) out.push_back(entry.second);
  return out;
}

// Scope pod: one merge for the pod's sum, one affinity for every container.
StatusOr<NumaPlacement> AdmitPod(const NumaNodeState& state, const NumaPodRequest& pod) {
  NumaNodeState work = state;
  Takes takes;
  const Unit unit = PodUnit(pod);
  QRM_ASSIGN_OR_RETURN(UnitResult r, AdmitUnit(work, pod, unit, takes));
  if (!r.admitted) return Refused(state, pod, unit, r);
  NumaPlacement placement;
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const NumaContainerRequest& c : *list) placement.container_affinity[c.name] = r.affinity;
  }
  placement.admitted = true;
  placement.nodes = r.used;
  placement.takes = ZoneTakes(takes);
  return placement;
}

// Scope container: init containers run before the app containers and hand their resources on
// to them, so each is checked on the state as it is and takes nothing; each app container
// takes its resources before the next one is admitted, as the plugins allocate in turn.
StatusOr<NumaPlacement> AdmitPerContainer(const NumaNodeState& state, const NumaPodRequest& pod) {
  NumaPlacement placement;
  for (const NumaContainerRequest& c : pod.init_containers) {
    NumaNodeState scratch = state;
    Takes ignored;
    QRM_ASSIGN_OR_RETURN(UnitResult r, AdmitUnit(scratch, pod, UnitOf(c), ignored));
    if (!r.admitted) return Refused(state, pod, UnitOf(c), r);
    placement.container_affinity[c.name] = r.affinity;
  }
  NumaNodeState work = state;
  Takes takes;
  for (const NumaContainerRequest& c : pod.containers) {
    QRM_ASSIGN_OR_RETURN(UnitResult r, AdmitUnit(work, pod, UnitOf(c), takes));
    if (!r.admitted) return Refused(state, pod, UnitOf(c), r);
    placement.container_affinity[c.name] = r.affinity;
    placement.nodes = placement.nodes.Or(r.used);
  }
  placement.admitted = true;
  placement.takes = ZoneTakes(takes);
  return placement;
}

}  // namespace

StatusOr<NumaPlacement> Admit(const NumaNodeState& state, const NumaPodRequest& pod) {
  if (pod.containers.empty()) {
    return InvalidArgumentError(fmt::format("pod {}: no containers", pod.pod));
  }
  if (!pod.qos_error.empty()) {
    NumaPlacement refused;
    refused.refusal = Refusal::kQosUnresolved;
    refused.reason = "CreateContainerError";
    refused.message = fmt::format("node {} pod {}: qrm-host cannot resolve its QoS: {}", state.node,
                                  pod.pod, pod.qos_error);
    return refused;
  }
  for (const auto* list : {&pod.init_containers, &pod.containers}) {
    for (const NumaContainerRequest& c : *list) QRM_RETURN_IF_ERROR(CheckRequest(pod, c));
  }
  return state.scope == topology::Scope::kPod ? AdmitPod(state, pod)
                                              : AdmitPerContainer(state, pod);
}

Status Place(NumaNodeState& state, const NumaPlacement& placement) {
  if (!placement.admitted) {
    return FailedPreconditionError(fmt::format("node {}: a refused placement cannot be placed ({})",
                                               state.node, placement.message));
  }
  for (const ZoneTake& take : placement.takes) {  // check everything before changing anything
    const NumaZone* zone = state.Zone(take.zone);
    if (zone == nullptr) {
      return FailedPreconditionError(
          fmt::format("node {}: the placement takes from NUMA zone {}, which it does not have",
                      state.node, take.zone));
    }
    for (const auto& [resource, amount] : take.amounts) {
      const int64_t free = ZoneAmount(*zone, resource).free;
      if (amount > free) {
        return FailedPreconditionError(
            fmt::format("node {} NUMA zone {}: the placement takes {} but {} is free", state.node,
                        take.zone, Amount(resource, amount), free));
      }
    }
  }
  for (const ZoneTake& take : placement.takes) {
    NumaZone* zone = state.Zone(take.zone);
    for (const auto& [resource, amount] : take.amounts) {
      MutableZoneAmount(*zone, resource).free -= amount;
    }
    ZoneBinding& b = zone->binding;
    if (take.binds) {
      b.bound_pods = SatAdd(b.bound_pods, 1);
      AddRole(b, take.role);
    }
    b.exclusive = b.exclusive || take.exclusive;
    b.dedicated_cpu_milli = SatAdd(b.dedicated_cpu_milli, take.dedicated_cpu_milli);
  }
  return Status::Ok();
}

}  // namespace qrm::cluster::drain
