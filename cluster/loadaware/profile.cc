#include "cluster/loadaware/profile.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace qrm::cluster::loadaware {
namespace {

Status CheckCustom(const std::map<std::string, int64_t>& thresholds, std::string_view field,
                   const Vectorizer& vectorizer) {
  for (const auto& [name, percent] : thresholds) {
    if (!vectorizer.IndexOf(name)) {
      return InvalidArgumentError(fmt::format(
          "node annotation scheduling.koordinator.sh/usage-thresholds: {} names resource \"{}\", "
          "unknown to the plugin (known: {}; add it to supportedResources)",
          field, name, fmt::join(vectorizer.names(), ", ")));
    }
    if (percent < 0) {
      return InvalidArgumentError(fmt::format(
          "node annotation scheduling.koordinator.sh/usage-thresholds: {} of {} is negative ({})",
          field, name, percent));
    }
  }
  return Status::Ok();
}

}  // namespace

FilterProfile ArgsFilterProfile(const LoadAwareArgs& args, const Vectorizer& vectorizer) {
  FilterProfile p;
  p.usage = vectorizer.ToFactorVec(args.usage_thresholds);
  p.prod = vectorizer.ToFactorVec(args.prod_usage_thresholds);
  if (args.aggregated && !args.aggregated->usage_thresholds.empty() &&
      !args.aggregated->usage_aggregation_type.empty()) {
    p.aggregated = AggregatedFilterProfile{
        vectorizer.ToFactorVec(args.aggregated->usage_thresholds),
        args.aggregated->usage_aggregation_type, args.aggregated->usage_aggregated_duration};
  }
  return p;
}

StatusOr<std::optional<FilterProfile>> NodeFilterProfile(
    const FilterProfile& args_profile, const std::optional<CustomUsageThresholds>& custom,
    const Vectorizer& vectorizer) {
  if (!custom) return std::optional<FilterProfile>();
  const CustomAggregatedUsage* agg = nullptr;
  if (custom->aggregated_usage && !custom->aggregated_usage->usage_thresholds.empty() &&
      !custom->aggregated_usage->usage_aggregation_type.empty()) {
    agg = &*custom->aggregated_usage;
  }
  if (custom->usage_thresholds.empty() && custom->prod_usage_thresholds.empty() && !agg) {
    return std::optional<FilterProfile>();
  }
  if (Status s = CheckCustom(custom->usage_thresholds, "usageThresholds", vectorizer); !s.ok()) {
    return s;
  }
  if (Status s = CheckCustom(custom->prod_usage_thresholds, "prodUsageThresholds", vectorizer);
      !s.ok()) {
    return s;
  }
  if (agg) {
    Status s = CheckCustom(agg->usage_thresholds, "aggregatedUsage.usageThresholds", vectorizer);
    if (!s.ok()) return s;
  }
  FilterProfile p = args_profile;
  if (!custom->usage_thresholds.empty()) p.usage = vectorizer.ToFactorVec(custom->usage_thresholds);
  if (!custom->prod_usage_thresholds.empty()) {
    p.prod = vectorizer.ToFactorVec(custom->prod_usage_thresholds);
  }
  if (agg) {
    p.aggregated = AggregatedFilterProfile{
        vectorizer.ToFactorVec(agg->usage_thresholds), agg->usage_aggregation_type,
        agg->usage_aggregated_duration.value_or(std::chrono::seconds(0))};
  }
  return std::optional<FilterProfile>(std::move(p));
}

}  // namespace qrm::cluster::loadaware
