// The advisor's vocabulary: what a usage sample of a node and its pods is, for one resource.
//
// Every model, trace reader and evaluation speaks these types. Units are the resource's own:
// CPU in cores, memory in bytes (trace readers whose files hold percentages keep percentages;
// the unit only has to be the same for usage, request and capacity).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace qrm::advisor {

enum class Resource { kCpu, kMemory };

std::string_view ResourceName(Resource r);  // "cpu", "memory"
StatusOr<Resource> ParseResource(std::string_view name);

// Koordinator's priority bands (koordinator.sh/priority-class: koord-prod, koord-mid,
// koord-batch, koord-free); "system" usage (node minus pods) belongs to none.
enum class PriorityClass { kProd, kMid, kBatch, kFree };

std::string_view PriorityClassName(PriorityClass c);  // "prod", "mid", "batch", "free"
StatusOr<PriorityClass> ParsePriorityClass(std::string_view name);

// One pod's usage over one sampling step.
struct PodUsage {
  std::string uid;
  PriorityClass priority = PriorityClass::kProd;
  double request = 0;    // what it asked for (0: none)
  double usage = 0;      // the step's representative sample (the p90 of a minute: see replay)
  double usage_max = 0;  // the step's highest raw sample (>= usage)
  int64_t started = 0;   // seconds, when it was first seen (cold-start rules use its age)
};

// The node's usage over one sampling step, for one resource. `time` is the step's end in
// seconds: everything in it happened before `time`.
struct Observation {
  int64_t time = 0;
  double node = 0;             // the node's representative sample
  double node_max = 0;         // the node's highest raw sample in the step (>= node)
  double capacity = 0;         // what the node has of the resource (> 0)
  std::vector<PodUsage> pods;  // may be empty: a machine-level trace has no pods

  // Node usage not accounted to any pod: max(node - sum of pods, 0).
  double System() const;
  // Sum of the pods' representative samples.
  double PodsUsage() const;
};

// One raw usage sample as read from a trace or a cgroup, before steps are formed.
struct RawSample {
  int64_t time = 0;  // seconds
  double value = 0;
};

}  // namespace qrm::advisor
