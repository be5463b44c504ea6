// NodeMetric JSON (node_metric.h): exactly what json.Marshal of Koordinator's Go types writes,
// and reading of what an API server returns (a NodeMetric, or a NodeMetricList).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cluster/objects/node_metric.h"
#include "common/status.h"

namespace qrm::cluster {

std::string EncodeNodeMetric(const NodeMetric& metric);
// The status alone (the member a status update replaces).
std::string EncodeNodeMetricStatus(const NodeMetricStatus& status);
// Errors name the field path and the value ("status.nodeMetric.nodeUsage.resources.cpu:
// \"12x\" is not a quantity ..."). Negative usages are refused: no consumer may read them
// as an idle node.
StatusOr<NodeMetric> DecodeNodeMetric(std::string_view text);
// A list (GET of the collection): its items and the list's resourceVersion.
struct NodeMetricList {
  std::string resource_version;
  std::vector<NodeMetric> items;
};
StatusOr<NodeMetricList> DecodeNodeMetricList(std::string_view text);

}  // namespace qrm::cluster
