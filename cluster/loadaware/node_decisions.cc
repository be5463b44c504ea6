#include "cluster/loadaware/node_decisions.h"

#include <fmt/format.h>

#include "cluster/loadaware/formulas.h"

namespace qrm::cluster::loadaware {
namespace {

Status UnknownNode() {
  return NotFoundError("no Node object known to the load-aware cache");
}

FilterVerdict FilterError(std::string_view name, const Status& error) {
  FilterVerdict v;
  v.path = FilterPath::kError;
  v.error = error.WithContext(fmt::format("node {}", name));
  return v;
}

NodeScore ScoreError(std::string_view name, const Status& error) {
  return NodeScore{0, ScorePath::kError, error.WithContext(fmt::format("node {}", name))};
}

FilterVerdict Verdict(FilterPath path) {
  FilterVerdict v;
  v.path = path;
  return v;
}

// The expiry rule of the filter: refuse the node only when expiry is filtered and scheduling
// on expired metrics is explicitly disallowed.
std::optional<FilterPath> ExpiryVerdict(const LoadAwareArgs& args, const MetricState& metric,
                                        TimePoint now) {
  if (!args.filter_expired_node_metrics.value_or(false) || !args.node_metric_expiration_seconds ||
      !IsMetricExpired(metric.update_time, *args.node_metric_expiration_seconds, now)) {
    return std::nullopt;
  }
  if (args.enable_schedule_when_node_metrics_expired &&
      !*args.enable_schedule_when_node_metrics_expired) {
    return FilterPath::kMetricExpired;
  }
  return FilterPath::kMetricExpiredAllowed;
}

}  // namespace

StatusOr<IncomingPod> PrepareIncoming(const Config& config, const PodInput& pod) {
  IncomingPod in;
  in.priority = PodPriorityClass(pod);
  in.daemonset = pod.owned_by_daemonset;
  StatusOr<ResourceVector> estimate = config.estimator().EstimatePod(pod, in.priority);
  if (!estimate.ok()) return estimate.status();
  in.estimate = *estimate;
  return in;
}

FilterVerdict FilterNode(const Config& config, const IncomingPod& pod, std::string_view name,
                         const NodeLoad* node, TimePoint now) {
  if (!node || !node->spec()) return FilterError(name, UnknownNode());
  if (pod.daemonset) return Verdict(FilterPath::kDaemonSetPod);
  const NodeSpecState& spec = *node->spec();
  if (!spec.profile_error.ok()) return FilterError(name, spec.profile_error);
  const FilterProfile& profile = node->profile(config);
  // Prod thresholds, when set, apply to prod pods; otherwise the aggregated thresholds, when
  // configured, replace the plain ones.
  const bool prod_pod = !IsEmpty(profile.prod) && pod.priority == PriorityClass::kProd;
  const bool aggregated = !prod_pod && profile.aggregated.has_value();
  const ResourceVector& thresholds = prod_pod     ? profile.prod
                                     : aggregated ? profile.aggregated->thresholds
                                                  : profile.usage;
  if (IsEmpty(thresholds)) return Verdict(FilterPath::kThresholdsOff);
  const MetricState* metric = node->metric();
  if (!metric) return Verdict(FilterPath::kNoMetric);
  if (auto expiry = ExpiryVerdict(config.args(), *metric, now)) return Verdict(*expiry);
  if (!metric->has_node_metric) return Verdict(FilterPath::kColdStart);
  if (!node->load_error().ok()) return FilterError(name, node->load_error());
  if (!spec.allocatable_error.ok()) return FilterError(name, spec.allocatable_error);

  ResourceVector estimated = prod_pod     ? node->prod_usage()
                             : aggregated ? node->filter_aggregated_usage()
                                          : node->plain_usage();
  Add(estimated, pod.estimate);
  const auto exceeded = FirstExceeded(thresholds, estimated, spec.allocatable);
  if (!exceeded) return Verdict(FilterPath::kWithinThresholds);
  FilterVerdict v;
  v.path = aggregated ? FilterPath::kAggregatedUsageExceeds : FilterPath::kUsageExceeds;
  v.resource = config.vectorizer().name(exceeded->resource);
  v.usage_percent = exceeded->usage_percent;
  v.threshold_percent = exceeded->threshold_percent;
  v.estimated = exceeded->estimated;
  v.allocatable = exceeded->allocatable;
  return v;
}

NodeScore ScoreNode(const Config& config, const IncomingPod& pod, std::string_view name,
                    const NodeLoad* node, TimePoint now) {
  const std::optional<ResourceVector>& weights = config.score_weights();
  if (!weights) return NodeScore{0, ScorePath::kScoringOff, {}};
  if (!node || !node->spec()) return ScoreError(name, UnknownNode());
  const LoadAwareArgs& args = config.args();
  const bool prod_pod = args.score_according_prod_usage && pod.priority == PriorityClass::kProd;
  const bool aggregated =
      !prod_pod && args.aggregated && !args.aggregated->score_aggregation_type.empty();
  const MetricState* metric = node->metric();
  if (!metric) return NodeScore{0, ScorePath::kNoMetric, {}};
  if (args.node_metric_expiration_seconds &&
      IsMetricExpired(metric->update_time, *args.node_metric_expiration_seconds, now)) {
    return NodeScore{0, ScorePath::kMetricExpired, {}};
  }
  if (!metric->has_node_metric) return NodeScore{0, ScorePath::kColdStart, {}};
  const NodeSpecState& spec = *node->spec();
  if (!node->load_error().ok()) return ScoreError(name, node->load_error());
  if (!spec.allocatable_error.ok()) return ScoreError(name, spec.allocatable_error);

  ResourceVector used = prod_pod     ? node->prod_usage()
                        : aggregated ? node->score_aggregated_usage()
                                     : node->plain_usage();
  Add(used, pod.estimate);
  const int64_t score = LoadAwareScore(args.dominant_resource_weight, *weights, used,
                                       spec.allocatable, config.vectorizer().size());
  return NodeScore{score, ScorePath::kScored, {}};
}

}  // namespace qrm::cluster::loadaware
