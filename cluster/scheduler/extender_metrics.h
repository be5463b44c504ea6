// The extender's counters for /metrics (docs/metrics: qrm_extender_*):
//   qrm_extender_requests_total{verb,result}    requests by verb (filter, prioritize, bind) and
//                                               result (ok, error, bad-request)
//   qrm_extender_request_seconds{verb}          request latency (histogram: sum and count)
//   qrm_extender_filtered_nodes_total{reason}   nodes a filter refused, by reason (usage-exceeds,
//                                               aggregated-usage-exceeds, metric-expired, error,
//                                               unknown-node)
//   qrm_extender_errors_total{kind}             bad input: pod, node, node-metric, annotation,
//                                               bind
#pragma once

#include <string_view>

#include "common/metrics/metrics.h"

namespace qrm::cluster::scheduler {

class ExtenderMetrics {
 public:
  explicit ExtenderMetrics(metrics::Registry& registry) : registry_(registry) {}

  void Request(std::string_view verb, std::string_view result, double seconds);
  void FilteredOut(std::string_view reason, double nodes);
  void Error(std::string_view kind, double count = 1);

 private:
  metrics::Registry& registry_;
};

}  // namespace qrm::cluster::scheduler
