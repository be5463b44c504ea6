#include "cluster/scheduler/extender_metrics.h"

#include <string>

namespace qrm::cluster::scheduler {

void ExtenderMetrics::Request(std::string_view verb, std::string_view result, double seconds) {
  const std::string v(verb);
  registry_
      .GetCounter("qrm_extender_requests_total", "Scheduler extender requests by verb and result.",
                  {{"verb", v}, {"result", std::string(result)}})
      .Inc();
  registry_
      .GetHistogram("qrm_extender_request_seconds", "Scheduler extender request latency.",
                    {{"verb", v}})
      .Observe(seconds);
}

void ExtenderMetrics::FilteredOut(std::string_view reason, double nodes) {
  registry_
      .GetCounter("qrm_extender_filtered_nodes_total",
                  "Nodes the scheduler extender's filter refused, by reason.",
                  {{"reason", std::string(reason)}})
      .Inc(nodes);
}

void ExtenderMetrics::Error(std::string_view kind, double count) {
  registry_
      .GetCounter("qrm_extender_errors_total",
                  "Bad input the scheduler extender met (pod, node, node-metric, annotation, "
                  "bind).",
                  {{"kind", std::string(kind)}})
      .Inc(count);
}

}  // namespace qrm::cluster::scheduler
