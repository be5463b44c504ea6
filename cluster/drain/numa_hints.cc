#include "cluster/drain/numa_hints.h"

#include <algorithm>
#include <limits>

#include "cluster/drain/saturating.h"

namespace qrm::cluster::drain {
namespace {

struct Candidate {
  int id;
  int64_t usable;
  int64_t capacity;
};

std::vector<Candidate> Candidates(const NumaNodeState& state, const std::string& resource,
                                  bool whole_cpus, NumaMask allowed) {
  std::vector<Candidate> out;
  for (const NumaZone& z : state.zones) {
    const ResourceAmount a = ZoneAmount(z, resource);
    if (a.capacity > 0 && allowed.Has(z.id))
      out.push_back({z.id, UsableFree(z, resource, whole_cpus), a.capacity});
  }
  return out;
}

}  // namespace

int64_t UsableFree(const NumaZone& zone, const std::string& resource, bool whole_cpus) {
  const int64_t free = ZoneAmount(zone, resource).free;
  return whole_cpus ? free / 1000 * 1000 : free;
}

std::vector<topology::TopologyHint> ResourceHints(const NumaNodeState& state,
                                                  const std::string& resource, int64_t amount,
                                                  PreferRule rule, bool whole_cpus,
                                                  NumaMask allowed) {
  const std::vector<Candidate> zones = Candidates(state, resource, whole_cpus, allowed);
  std::vector<topology::TopologyHint> hints;
  int narrowest_free = std::numeric_limits<int>::max();
  int narrowest_capacity = std::numeric_limits<int>::max();
  // At most kMaxNumaZones zones: every subset is a few additions.
  for (uint32_t subset = 1; subset < (uint32_t{1} << zones.size()); ++subset) {
    NumaMask mask;
    int64_t usable = 0, capacity = 0;
    for (size_t i = 0; i < zones.size(); ++i) {
      if (((subset >> i) & 1U) == 0) continue;
      mask = mask.With(zones[i].id);
      usable = SatAdd(usable, zones[i].usable);
      capacity = SatAdd(capacity, zones[i].capacity);
    }
    if (capacity >= amount) narrowest_capacity = std::min(narrowest_capacity, mask.Count());
    if (usable < amount) continue;
    narrowest_free = std::min(narrowest_free, mask.Count());
    hints.push_back(topology::TopologyHint::Of(mask, false));
  }
  const int preferred_width =
      rule == PreferRule::kNarrowestFree ? narrowest_free : narrowest_capacity;
  for (topology::TopologyHint& hint : hints) {
    hint.preferred = hint.affinity->Count() == preferred_width;
  }
  std::sort(hints.begin(), hints.end(),
            [](const auto& a, const auto& b) { return a.affinity->IsNarrowerThan(*b.affinity); });
  return hints;
}

}  // namespace qrm::cluster::drain
