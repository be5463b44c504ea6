// LoadAwareSchedulingArgs: SetDefaults_LoadAwareSchedulingArgs (v1/defaults.go) and
// ValidateLoadAwareSchedulingArgs (validation/validation_pluginargs.go); each refusal names
// the field and the value.
#include <string>

#include "cluster/loadaware/config.h"
#include "tests/unit/cluster/loadaware/loadaware_test_util.h"

namespace qrm::cluster::loadaware::testing {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("defaults are Koordinator's") {
  const LoadAwareArgs a = DefaultArgs();
  CHECK(a.filter_expired_node_metrics == true);
  CHECK(a.enable_schedule_when_node_metrics_expired == false);
  CHECK(a.node_metric_expiration_seconds == 180);
  CHECK(a.resource_weights == ResourceFactors{{"cpu", 1}, {"memory", 1}});
  CHECK(a.usage_thresholds == ResourceFactors{{"cpu", 65}, {"memory", 95}});
  CHECK(a.estimated_scaling_factors == ResourceFactors{{"cpu", 85}, {"memory", 70}});
  CHECK(a.prod_usage_thresholds.empty());
  CHECK(a.dominant_resource_weight == 0);
  CHECK_FALSE(a.estimated_seconds_after_pod_scheduled.has_value());
  CHECK_FALSE(a.estimated_seconds_after_initialized.has_value());
  CHECK_FALSE(a.aggregated.has_value());
  CHECK(Validate(a).ok());
}

TEST_CASE("defaults fill what is unset only") {
  LoadAwareArgs a;
  a.estimated_scaling_factors = {{"cpu", 50}, {"nvidia.com/gpu", 10}};
  a.usage_thresholds = {{"memory", 80}};
  a.dominant_resource_weight = 5;
  a.filter_expired_node_metrics = false;
  SetDefaults(a);
  // Missing factors are added, set ones kept.
  CHECK(a.estimated_scaling_factors ==
        ResourceFactors{{"cpu", 50}, {"memory", 70}, {"nvidia.com/gpu", 10}});
  CHECK(a.usage_thresholds == ResourceFactors{{"memory", 80}});  // not merged
  CHECK(a.resource_weights.empty());  // a dominant weight suppresses the default weights
  CHECK(a.filter_expired_node_metrics == false);
}

std::string Refusal(LoadAwareArgs a) {
  Status s = Validate(a);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kInvalidArgument);
  return s.message();
}

TEST_CASE("validation refuses what Koordinator refuses") {
  LoadAwareArgs a = DefaultArgs();
  a.node_metric_expiration_seconds = 0;
  CHECK_THAT(Refusal(a), Contains("nodeMetricExpirationSeconds: 0: should be a positive value"));

  a = DefaultArgs();
  a.resource_weights["cpu"] = 0;
  CHECK_THAT(Refusal(a), Contains("resourceWeights: resource weight of cpu should be a positive "
                                  "value, got 0"));
  a.resource_weights["cpu"] = 101;
  CHECK_THAT(Refusal(a), Contains("resource weight of cpu should be less than 100, got 101"));

  a = DefaultArgs();
  a.dominant_resource_weight = -1;
  CHECK_THAT(Refusal(a), Contains("dominantResourceWeight: -1"));
  a.dominant_resource_weight = 101;
  CHECK_THAT(Refusal(a), Contains("dominantResourceWeight: 101"));

  a = DefaultArgs();
  a.usage_thresholds["memory"] = 101;
  CHECK_THAT(Refusal(a), Contains("usageThresholds: resource threshold of memory should be less "
                                  "than 100, got 101"));
  a.usage_thresholds["memory"] = -1;
  CHECK_THAT(Refusal(a), Contains("got -1"));

  a = DefaultArgs();
  a.estimated_scaling_factors["cpu"] = 0;
  CHECK_THAT(Refusal(a), Contains("estimatedScalingFactors: estimated scaling factor of cpu"));

  // Every weighted resource needs a scaling factor.
  a = DefaultArgs();
  a.resource_weights["nvidia.com/gpu"] = 1;
  CHECK_THAT(Refusal(a), Contains("estimatedScalingFactors: not found: \"nvidia.com/gpu\""));
}

TEST_CASE("validation of the aggregated arguments") {
  LoadAwareArgs a = DefaultArgs();
  a.aggregated = AggregatedArgs{{{"cpu", 120}}, "p42", -1s, "max", -2s};
  const std::string m = Refusal(a);
  CHECK_THAT(m, Contains("aggregated.usageThresholds: resource threshold of cpu should be less "
                         "than 100, got 120"));
  CHECK_THAT(m, Contains("aggregated.usageAggregationType: unsupported value \"p42\""));
  CHECK_THAT(m, Contains("aggregated.usageAggregatedDuration: -1s"));
  CHECK_THAT(m, Contains("aggregated.scoreAggregationType: unsupported value \"max\""));
  CHECK_THAT(m, Contains("aggregated.scoreAggregatedDuration: -2s"));
  // Every aggregation type Koordinator accepts.
  for (const char* t : {"avg", "p50", "p90", "p95", "p99"}) {
    a.aggregated = AggregatedArgs{{{"cpu", 60}}, t, 300s, t, 0s};
    CHECK(Validate(a).ok());
  }
}

TEST_CASE("validation leaves alone what Koordinator leaves alone") {
  LoadAwareArgs a = DefaultArgs();
  a.prod_usage_thresholds = {{"cpu", 250}};      // not validated upstream
  a.estimated_seconds_after_pod_scheduled = -1;  // negative: off
  a.estimator = "someEstimator";                 // unknown: the default estimator
  CHECK(Validate(a).ok());
}

TEST_CASE("validation refuses what would break this implementation") {
  LoadAwareArgs a = DefaultArgs();
  a.supported_resources = {"a", "b", "c", "d", "e", "f", "g"};  // 9 names with cpu, memory
  CHECK_THAT(Refusal(a), Contains("qrm: 9 distinct names, at most 8 supported"));
  a = DefaultArgs();
  a.usage_thresholds[""] = 10;
  CHECK_THAT(Refusal(a), Contains("usageThresholds: qrm: empty resource name"));
  a = DefaultArgs();
  a.node_metric_expiration_seconds = kMaxDurationSeconds + 1;
  CHECK_THAT(Refusal(a), Contains("nodeMetricExpirationSeconds: 9223372037: qrm: above"));
  a = DefaultArgs();
  a.estimated_seconds_after_initialized = kMaxDurationSeconds + 1;
  CHECK_THAT(Refusal(a), Contains("estimatedSecondsAfterInitialized"));
}

TEST_CASE("all errors are reported together") {
  LoadAwareArgs a = DefaultArgs();
  a.dominant_resource_weight = -1;
  a.usage_thresholds["cpu"] = 300;
  const std::string m = Refusal(a);
  CHECK_THAT(m, Contains("dominantResourceWeight"));
  CHECK_THAT(m, Contains("usageThresholds"));
  CHECK_THAT(m, Contains("; "));
}

TEST_CASE("the cache refuses invalid arguments") {
  LoadAwareArgs a = DefaultArgs();
  a.usage_thresholds["cpu"] = 300;
  CHECK_FALSE(NodeLoadCache::Create(a).ok());
}

TEST_CASE("the vectorizer holds cpu memory and every name of the arguments sorted") {
  LoadAwareArgs a = DefaultArgs();
  a.prod_usage_thresholds = {{"nvidia.com/gpu", 50}};
  a.supported_resources = {"example.com/foo"};
  const Vectorizer v = VectorizerFromArgs(a);
  CHECK(v.names() ==
        std::vector<std::string>{"cpu", "example.com/foo", "memory", "nvidia.com/gpu"});
  CHECK(v.ToVec({{"memory", 7}, {"unknown", 9}}) == ResourceVector{0, 0, 7, 0});
}

}  // namespace
}  // namespace qrm::cluster::loadaware::testing
