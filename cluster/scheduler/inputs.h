// The Kubernetes objects the extender receives (a pod and nodes from kube-scheduler or the
// informers, NodeMetrics from the API server) as the plain structs of the load-aware decision
// core (cluster/loadaware/inputs.h), with Koordinator's labels and annotations parsed as
// Koordinator parses them.
//
// Annotations whose text does not parse are passed as absent (the plugin arguments then apply,
// as upstream); each is described in `warnings`, when given, so the caller can log it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/extender/kube_objects.h"
#include "cluster/loadaware/inputs.h"
#include "cluster/objects/node_metric.h"
#include "common/quantity.h"
#include "common/status.h"

namespace qrm::cluster::scheduler {

// What went wrong in a conversion that still produced a usable input: "node n1: annotation
// scheduling.koordinator.sh/usage-thresholds: invalid JSON at byte 3: ...".
using Warnings = std::vector<std::string>;

// corev1.ResourceList in the units the decision core reads: cpu as MilliValue(), the rest as
// Value() (both saturate at the int64 range; the core refuses quantities above kMaxQuantity).
loadaware::ResourceList ToLoadAwareList(const std::map<std::string, Quantity>& list);

loadaware::PodInput PodInputFrom(const extender::Pod& pod, Warnings* warnings = nullptr);

loadaware::NodeInput NodeInputFrom(const extender::Node& node, Warnings* warnings = nullptr);

// koordlet reports empty aggregates while it warms up ("usage":{"avg":{}} or an entry without
// usage): an aggregation type whose list is empty, and an entry left with no type (or with a
// duration below one second, which no argument can name), are left out, so they read as "not
// reported", never as zero usage. Values are checked by the decision core, which gives the node
// an error verdict at the step where a bad one would change the decision (negative or huge
// quantities, usage lists without cpu or memory, a bad report interval). kInvalidArgument only
// for what has no node to blame or no representation: an empty metadata.name, an updateTime
// outside the years 1678-2262 (nanoseconds in int64).
StatusOr<loadaware::NodeMetricInput> NodeMetricInputFrom(const NodeMetric& metric);

// metav1.Time text (RFC 3339, any offset, fraction kept to the nanosecond) as a TimePoint.
// kInvalidArgument quoting the text when it does not parse or lies outside the years 1678-2262.
StatusOr<loadaware::TimePoint> ParseKubeTime(std::string_view text);

}  // namespace qrm::cluster::scheduler
