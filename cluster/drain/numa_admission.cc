#include "cluster/drain/numa_admission.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "cluster/drain/numa_hints.h"
#include "cluster/drain/saturating.h"
#include "qrm/topology/policy_names.h"

namespace qrm::cluster::drain {
namespace {

using topology::TopologyHint;
using Takes = std::map<int, std::map<std::string, int64_t>>;  // zone -> resource -> amount

// One resource of an admission unit (a container, or the whole pod for scope pod).
struct Need {
  std::string resource;
  int64_t amount = 0;
  bool hinted = false;  // false: taken from the shared pool, node totals
  PreferRule rule = PreferRule::kNarrowestFree;
  bool whole_cpus = false;
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

std::vector<Need> Needs(const NumaNodeState& state, const NumaPodRequest& pod, const Unit& unit) {
  const bool dedicated = pod.qos == NumaQos::kDedicated;
  const bool bound = pod.numa_binding && (dedicated || pod.qos == NumaQos::kShared);
  std::vector<Need> needs;
  for (const auto& [resource, amount] : unit.amounts) {
    if (amount == 0) continue;
    Need need{resource, amount};
    if (resource == "cpu") {
      need.hinted = dedicated;
      need.whole_cpus = dedicated;
      if (dedicated) need.amount = SatAdd(amount, 999) / 1000 * 1000;
      need.rule = bound ? PreferRule::kNarrowestFree : PreferRule::kNarrowestCapacity;
    } else if (resource == "memory") {
      need.hinted = bound;
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

// Fills the zones of `mask` in ascending id order.
Status TakeFrom(NumaNodeState& work, const Need& need, NumaMask mask, Takes& takes) {
  int64_t left = need.amount, free = 0;
  for (const NumaZone& z : work.zones) {
    if (mask.Has(z.id)) free = SatAdd(free, UsableFree(z, need.resource, need.whole_cpus));
  }
  if (free < need.amount) {
    return ResourceExhaustedError(
        fmt::format("{} must come from NUMA node(s) {}, which have {} free",
                    Amount(need.resource, need.amount), mask.ToString(), free));
  }
  for (NumaZone& z : work.zones) {
    if (!mask.Has(z.id) || left == 0) continue;
    const int64_t take = std::min(left, UsableFree(z, need.resource, need.whole_cpus));
    MutableZoneAmount(z, need.resource).free -= take;
    takes[z.id][need.resource] += take;
    left -= take;
  }
  return Status::Ok();
}

// The shared pool spans every zone: takes in proportion to each zone's free amount.
Status TakeFromPool(NumaNodeState& work, const Need& need, Takes& takes) {
  int64_t total = 0;
  for (const NumaZone& z : work.zones) total = SatAdd(total, ZoneAmount(z, need.resource).free);
  if (total < need.amount) {
    return ResourceExhaustedError(fmt::format("{} requested, the node has {} free",
                                              Amount(need.resource, need.amount), total));
  }
  int64_t left = need.amount;
  std::vector<int64_t> share;
  for (const NumaZone& z : work.zones) {
    const long double part = static_cast<long double>(need.amount) *
                             static_cast<long double>(ZoneAmount(z, need.resource).free) /
                             static_cast<long double>(std::max<int64_t>(total, 1));
    share.push_back(std::min(left, static_cast<int64_t>(part)));
    left -= share.back();
  }
  for (size_t i = 0; i < work.zones.size(); ++i) {  // the rounding remainder, lowest ids first
    const int64_t room = ZoneAmount(work.zones[i], need.resource).free - share[i];
    const int64_t extra = std::min(left, std::max<int64_t>(room, 0));
    share[i] += extra;
    left -= extra;
  }
  for (size_t i = 0; i < work.zones.size(); ++i) {
    if (share[i] == 0) continue;
    MutableZoneAmount(work.zones[i], need.resource).free -= share[i];
    takes[work.zones[i].id][need.resource] += share[i];
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
};

UnitResult Refuse(Refusal refusal, std::string message) {
  UnitResult r;
  r.refusal = refusal;
  r.message = std::move(message);
  return r;
}

StatusOr<UnitResult> AdmitUnit(NumaNodeState& work, const NumaPodRequest& pod, const Unit& unit,
                               Takes& takes) {
  const std::vector<Need> needs = Needs(work, pod, unit);
  std::vector<std::vector<TopologyHint>> hints(needs.size());
  topology::ProvidersHints providers;
  for (size_t i = 0; i < needs.size(); ++i) {
    if (!needs[i].hinted) continue;
    hints[i] =
        ResourceHints(work, needs[i].resource, needs[i].amount, needs[i].rule, needs[i].whole_cpus);
    providers.push_back({{needs[i].resource, hints[i]}});
  }
  UnitResult result;
  result.admitted = true;
  if (!providers.empty() && work.policy != topology::Policy::kNone) {
    QRM_ASSIGN_OR_RETURN(topology::MergeResult merged,
                         topology::Merge(work.policy, work.options, *work.numa_info, providers));
    if (!merged.admit) {
      return Refuse(Refusal::kTopologyAffinity,
                    fmt::format("{} (policy {}, best hint {})", kTopologyAffinityErrorMessage,
                                topology::PolicyName(work.policy), merged.best.ToString()));
    }
    result.affinity = merged.best.affinity;
  }
  for (size_t i = 0; i < needs.size(); ++i) {
    Status taken = Status::Ok();
    if (!needs[i].hinted) {
      taken = TakeFromPool(work, needs[i], takes);
    } else if (auto mask = Where(result.affinity, hints[i])) {
      taken = TakeFrom(work, needs[i], *mask, takes);
      result.used = result.used.Or(*mask);
    } else {
      taken = ResourceExhaustedError(fmt::format("{}: no set of NUMA nodes has it free",
                                                 Amount(needs[i].resource, needs[i].amount)));
    }
    if (!taken.ok()) return Refuse(Refusal::kOutOfResources, taken.message());
  }
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
  for (const auto& [zone, amounts] : takes) out.push_back({zone, amounts});
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
  }
  return Status::Ok();
}

}  // namespace qrm::cluster::drain
