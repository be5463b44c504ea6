// LoadAwareSchedulingArgs files as users write them in a KubeSchedulerConfiguration.
#include "cluster/scheduler/args_file.h"

#include <string>

#include <catch2/catch.hpp>

#include "testing/temp_dir.h"

namespace qrm::cluster::scheduler {
namespace {

using Catch::Matchers::Contains;
namespace la = loadaware;

la::LoadAwareArgs MustParse(const std::string& text) {
  StatusOr<la::LoadAwareArgs> args = ParseLoadAwareArgs(text);
  INFO(text);
  INFO((args.ok() ? std::string() : args.status().message()));
  REQUIRE(args.ok());
  return *args;
}

std::string Refusal(const std::string& text) {
  StatusOr<la::LoadAwareArgs> args = ParseLoadAwareArgs(text);
  INFO(text);
  REQUIRE_FALSE(args.ok());
  CHECK(args.status().code() == StatusCode::kInvalidArgument);
  return args.status().message();
}

TEST_CASE("args file reads every field of the v1beta3 args in YAML") {
  const la::LoadAwareArgs args = MustParse(R"(apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: LoadAwareSchedulingArgs
filterExpiredNodeMetrics: false
nodeMetricExpirationSeconds: 300
enableScheduleWhenNodeMetricsExpired: true
resourceWeights:
  cpu: 2
  memory: 1
dominantResourceWeight: 1
usageThresholds:
  cpu: 70
  memory: 90
prodUsageThresholds:
  cpu: 55
prodUsageIncludeSys: true
scoreAccordingProdUsage: true
estimator: defaultEstimator
estimatedScalingFactors:
  cpu: 80
estimatedSecondsAfterPodScheduled: 120
estimatedSecondsAfterInitialized: 60
allowCustomizeEstimation: true
supportedResources:
- kubernetes.io/batch-cpu
aggregated:
  usageThresholds:
    cpu: 60
  usageAggregationType: p95
  usageAggregatedDuration: 5m
  scoreAggregationType: p90
  scoreAggregatedDuration: 1h30m
)");
  CHECK(args.filter_expired_node_metrics == false);
  CHECK(args.node_metric_expiration_seconds == 300);
  CHECK(args.enable_schedule_when_node_metrics_expired == true);
  CHECK(args.resource_weights == la::ResourceFactors{{"cpu", 2}, {"memory", 1}});
  CHECK(args.dominant_resource_weight == 1);
  CHECK(args.usage_thresholds == la::ResourceFactors{{"cpu", 70}, {"memory", 90}});
  CHECK(args.prod_usage_thresholds == la::ResourceFactors{{"cpu", 55}});
  CHECK(args.prod_usage_include_sys);
  CHECK(args.score_according_prod_usage);
  CHECK(args.estimator == "defaultEstimator");
  // SetDefaults completes the factors.
  CHECK(args.estimated_scaling_factors == la::ResourceFactors{{"cpu", 80}, {"memory", 70}});
  CHECK(args.estimated_seconds_after_pod_scheduled == 120);
  CHECK(args.estimated_seconds_after_initialized == 60);
  CHECK(args.allow_customize_estimation);
  CHECK(args.supported_resources == std::vector<std::string>{"kubernetes.io/batch-cpu"});
  REQUIRE(args.aggregated.has_value());
  CHECK(args.aggregated->usage_thresholds == la::ResourceFactors{{"cpu", 60}});
  CHECK(args.aggregated->usage_aggregation_type == "p95");
  CHECK(args.aggregated->usage_aggregated_duration == std::chrono::minutes(5));
  CHECK(args.aggregated->score_aggregation_type == "p90");
  CHECK(args.aggregated->score_aggregated_duration == std::chrono::minutes(90));
}

TEST_CASE("args file reads JSON and defaults what is not given") {
  const la::LoadAwareArgs args =
      MustParse(R"({"apiVersion":"kubescheduler.config.k8s.io/v1","usageThresholds":{"cpu":50}})");
  CHECK(args.usage_thresholds == la::ResourceFactors{{"cpu", 50}});
  CHECK(args.filter_expired_node_metrics == true);
  CHECK(args.node_metric_expiration_seconds == 180);
  CHECK(args.estimated_scaling_factors == la::ResourceFactors{{"cpu", 85}, {"memory", 70}});
  CHECK_FALSE(args.aggregated.has_value());
}

TEST_CASE("an empty args file is the defaults") {
  const la::LoadAwareArgs empty = MustParse("");
  const la::LoadAwareArgs defaults = la::DefaultArgs();
  CHECK(empty.usage_thresholds == defaults.usage_thresholds);
  CHECK(empty.resource_weights == defaults.resource_weights);
  CHECK(MustParse("{}").usage_thresholds == defaults.usage_thresholds);
  CHECK(MustParse("aggregated: null\nusageThresholds:\n").usage_thresholds ==
        defaults.usage_thresholds);
}

TEST_CASE("args file refuses unknown fields naming the line") {
  CHECK(Refusal("usageThresholds:\n  cpu: 60\nusageThreshold:\n  cpu: 60\n") ==
        "line 3: usageThreshold: unknown field of LoadAwareSchedulingArgs");
  CHECK(Refusal("aggregated:\n  usageAggregationType: p95\n  duration: 5m\n") ==
        "line 3: aggregated.duration: unknown field of aggregated");
  // Field names are case-sensitive, as kube-scheduler's strict decoding.
  CHECK(Refusal("UsageThresholds:\n  cpu: 60\n") ==
        "line 1: UsageThresholds: unknown field of LoadAwareSchedulingArgs");
}

TEST_CASE("args file refuses wrong types naming the line and value") {
  CHECK(Refusal("usageThresholds:\n  cpu: \"60\"\n") ==
        "line 2: usageThresholds.cpu: expected an integer, got \"60\"");
  CHECK(Refusal("usageThresholds:\n  cpu: 60.5\n") ==
        "line 2: usageThresholds.cpu: expected an integer, got \"60.5\"");
  CHECK(Refusal("filterExpiredNodeMetrics: yes\n") ==
        "line 1: filterExpiredNodeMetrics: expected true or false, got \"yes\"");
  CHECK(Refusal("usageThresholds: 60\n") ==
        "line 1: usageThresholds: expected a mapping of resource names, got \"60\"");
  CHECK(Refusal("estimator: 5\n") == "line 1: estimator: expected a string, got \"5\"");
  CHECK(Refusal("supportedResources: cpu\n") ==
        "line 1: supportedResources: expected a list of resource names, got \"cpu\"");
  // JSON has no lines: the field path says where.
  CHECK(Refusal(R"({"nodeMetricExpirationSeconds":"180"})") ==
        "nodeMetricExpirationSeconds: expected an integer, got \"180\"");
  CHECK(Refusal(R"({"aggregated":{"usageThresholds":{"cpu":true}}})") ==
        "aggregated.usageThresholds.cpu: expected an integer, got \"true\"");
  CHECK(Refusal(R"({"estimator":"a","estimator":"b"})") == "estimator: given twice");
}

TEST_CASE("args file refuses bad durations and type metadata") {
  CHECK_THAT(Refusal("aggregated:\n  usageAggregatedDuration: 5 minutes\n"),
             Contains("line 2: aggregated.usageAggregatedDuration: "));
  CHECK(Refusal("aggregated:\n  usageAggregatedDuration: 1.5s\n") ==
        "line 2: aggregated.usageAggregatedDuration: \"1.5s\" is not a whole number of seconds");
  CHECK_THAT(Refusal("aggregated:\n  scoreAggregatedDuration: 300\n"),
             Contains("line 2: aggregated.scoreAggregatedDuration: expected a string"));
  CHECK(Refusal("kind: NodeNUMAResourceArgs\n") ==
        "line 1: kind: \"NodeNUMAResourceArgs\" is not LoadAwareSchedulingArgs");
  CHECK_THAT(Refusal("apiVersion: kubescheduler.config.k8s.io/v1beta2\n"),
             Contains("line 1: apiVersion: \"kubescheduler.config.k8s.io/v1beta2\" is not"));
}

TEST_CASE("args file values are validated as Koordinator validates them") {
  CHECK_THAT(Refusal("usageThresholds:\n  cpu: 101\n"),
             Contains("LoadAwareSchedulingArgs: usageThresholds: resource threshold of cpu should "
                      "be less than 100, got 101"));
  CHECK_THAT(Refusal("aggregated:\n  usageAggregationType: p42\n"),
             Contains("aggregated.usageAggregationType: unsupported value \"p42\""));
  CHECK_THAT(Refusal("nodeMetricExpirationSeconds: -1\n"),
             Contains("nodeMetricExpirationSeconds: -1: should be a positive value"));
}

TEST_CASE("args file is read from disk with its path in errors") {
  qrm::testing::TempDir dir;
  const std::string good = dir.path() + "/args.yaml";
  qrm::testing::WriteFile(good, "usageThresholds:\n  memory: 80\n");
  StatusOr<la::LoadAwareArgs> args = ReadLoadAwareArgsFile(good);
  REQUIRE(args.ok());
  CHECK(args->usage_thresholds == la::ResourceFactors{{"memory", 80}});
  const std::string bad = dir.path() + "/bad.yaml";
  qrm::testing::WriteFile(bad, "usageThresholds: [\n");
  CHECK_THAT(ReadLoadAwareArgsFile(bad).status().message(), Contains(bad + ": line 1"));
  CHECK(ReadLoadAwareArgsFile(dir.path() + "/missing.yaml").status().code() ==
        StatusCode::kNotFound);
}

}  // namespace
}  // namespace qrm::cluster::scheduler
