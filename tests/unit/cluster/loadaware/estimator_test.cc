// The estimator: upstream TestDefaultEstimatorEstimatePod, TestDefaultEstimatorEstimateNode
// and TestShouldEstimatePodDeadline (estimator/default_estimator_test.go,
// pod_assign_cache_test.go) ported as data, then the rules around them: priority classes,
// requests and limits of init containers, sidecars, overhead and pod-level resources.
#include "cluster/loadaware/estimator.h"

#include <optional>
#include <utility>

#include "cluster/loadaware/config.h"
#include "cluster/loadaware/pod_resources.h"
#include "cluster/loadaware/priority.h"
#include "tests/unit/cluster/loadaware/loadaware_test_util.h"

namespace qrm::cluster::loadaware::testing {
namespace {

struct CpuMemEstimate {
  int64_t cpu = 0;
  int64_t memory = 0;
  bool operator==(const CpuMemEstimate&) const = default;
};

// Upstream builds the estimator from defaulted args without validating them (factors of 110).
CpuMemEstimate Estimate(const PodInput& pod, ResourceFactors factors = {},
                        bool allow_customize = false) {
  LoadAwareArgs args = Defaulted([&](LoadAwareArgs& a) {
    a.estimated_scaling_factors = std::move(factors);
    a.allow_customize_estimation = allow_customize;
  });
  const Vectorizer v = VectorizerFromArgs(args);
  const Estimator estimator(args, v);
  StatusOr<ResourceVector> e = estimator.EstimatePod(pod, PodPriorityClass(pod));
  INFO(e.status().ToString());
  REQUIRE(e.ok());
  return {(*e)[*v.IndexOf("cpu")], (*e)[*v.IndexOf("memory")]};
}

PodInput Main(ResourceList requests, ResourceList limits) {
  return PodBuilder("default", "p").Container(std::move(requests), std::move(limits));
}

TEST_CASE("upstream TestDefaultEstimatorEstimatePod") {
  // "estimate empty pod": a container without resources -> the defaults, unscaled.
  CHECK(Estimate(Main({}, {})) == CpuMemEstimate{250, 200 * kMi});
  // "estimate guaranteed pod": 4 cores * 85% = 3400m; 8 GiB * 70% = 6012954214.4 -> ...214.
  const PodInput guaranteed = Main(CpuMem(Cores(4), 8 * kGi), CpuMem(Cores(4), 8 * kGi));
  CHECK(Estimate(guaranteed) == CpuMemEstimate{3400, 6012954214});
  // "estimate burstable pod": limit 8 cores above the 4 requested: 8000 * 85% = 6800.
  CHECK(Estimate(Main(CpuMem(Cores(4), 8 * kGi), CpuMem(Cores(8), 8 * kGi))) ==
        CpuMemEstimate{6800, 6012954214});
  // "... zoomed cpu factors": cpu 110% -> 4400m, held at the 4000m limit.
  CHECK(Estimate(guaranteed, {{"cpu", 110}}) == CpuMemEstimate{4000, 6012954214});
  // "... zoomed memory factors": memory 110% -> 9448928051, held at the 8 GiB limit.
  CHECK(Estimate(guaranteed, {{"memory", 110}}) == CpuMemEstimate{3400, 8589934592});
  // "estimate Batch pod": BE label, priority 5000: batch-cpu 4000 and batch-memory 8 GiB.
  PodInput batch =
      PodBuilder("default", "p")
          .QosLabel("BE")
          .Priority(5000)
          .Container({{"kubernetes.io/batch-cpu", 4000}, {"kubernetes.io/batch-memory", 8 * kGi}},
                     {{"kubernetes.io/batch-cpu", 4000}, {"kubernetes.io/batch-memory", 8 * kGi}});
  CHECK(Estimate(batch) == CpuMemEstimate{3400, 6012954214});
  // "estimate pod only has request": factors 80/80: 3200m; 8 GiB * 80% = 6871947673.6 -> 674.
  PodInput requests_only =
      PodBuilder("default", "p").QosLabel("LS").Priority(9999).Req(CpuMem(Cores(4), 8 * kGi));
  CHECK(Estimate(requests_only, {{"cpu", 80}, {"memory", 80}}) == CpuMemEstimate{3200, 6871947674});
  // "estimate pod with customized factors": the pod's {"cpu": 100} over the args' 80/80.
  PodInput custom = requests_only;
  custom.custom_scaling_factors = std::map<std::string, int64_t>{{"cpu", 100}};
  CHECK(Estimate(custom, {{"cpu", 80}, {"memory", 80}}, true) == CpuMemEstimate{4000, 6871947674});
}

TEST_CASE("custom scaling factors need allowCustomizeEstimation and can exceed the limit cap") {
  PodInput pod = Main(CpuMem(Cores(1), 1 * kGi), CpuMem(1500, 0));
  pod.custom_scaling_factors = std::map<std::string, int64_t>{{"cpu", 200}};
  // Not allowed: the args' 85% of the 1500m limit = 1275m.
  CHECK(Estimate(pod).cpu == 1275);
  // Allowed: 1500 * 200% = 3000m, held at the 1500m limit; memory has no limit: 1 GiB * 70%.
  CHECK(Estimate(pod, {}, true) == CpuMemEstimate{1500, 751619277});
  // An empty custom map means the args' factors.
  pod.custom_scaling_factors = std::map<std::string, int64_t>{};
  CHECK(Estimate(pod, {}, true).cpu == 1275);
}

TEST_CASE("estimates round half away from zero") {
  // 1m * 50% = 0.5 -> 1; 3m * 50% = 1.5 -> 2; 1 byte * 70% = 0.7 -> 1.
  CHECK(Estimate(Main(CpuMem(1, 1), {}), {{"cpu", 50}}) == CpuMemEstimate{1, 1});
  CHECK(Estimate(Main(CpuMem(3, 1), {}), {{"cpu", 50}}).cpu == 2);
}

TEST_CASE("the priority class chooses the resource names a pod is estimated on") {
  // Mid pod asking plain cpu and memory: it is read on mid-cpu and mid-memory, which it does
  // not ask: 0 and 0 (no default for mid names).
  CHECK(Estimate(PodBuilder("default", "p").Priority(7500).Req(CpuMem(Cores(4), kGi))) ==
        CpuMemEstimate{0, 0});
  // Free pod: no names at all: 0 and 0.
  CHECK(Estimate(PodBuilder("default", "p").Priority(3500).Req(CpuMem(Cores(4), kGi))) ==
        CpuMemEstimate{0, 0});
  // Batch pod without batch resources: batch-cpu and batch-memory are 0: the defaults.
  CHECK(Estimate(PodBuilder("default", "p").Priority(5500).Req(CpuMem(Cores(4), kGi))) ==
        CpuMemEstimate{250, 200 * kMi});
}

TEST_CASE("GetPodPriorityClassWithDefault") {
  auto with_cpu = [] { return PodBuilder("default", "p").Req(CpuMem(100, 0)); };
  // The label wins over spec.priority.
  CHECK(PodPriorityClass(with_cpu().PriorityClassLabel("koord-batch").Priority(9999)) ==
        PriorityClass::kBatch);
  // An unknown label counts as none, and spec.priority is then not read: the QoS decides.
  CHECK(PodPriorityClass(with_cpu().PriorityClassLabel("gold").Priority(5000)) ==
        PriorityClass::kProd);
  CHECK(PodPriorityClass(PodBuilder("d", "p").PriorityClassLabel("gold").Priority(9999)) ==
        PriorityClass::kBatch);  // no resources: BestEffort
  // Priority bands, inclusive.
  CHECK(PodPriorityClass(PodBuilder("d", "p").Priority(9000)) == PriorityClass::kProd);
  CHECK(PodPriorityClass(PodBuilder("d", "p").Priority(7999)) == PriorityClass::kMid);
  CHECK(PodPriorityClass(PodBuilder("d", "p").Priority(5000)) == PriorityClass::kBatch);
  CHECK(PodPriorityClass(PodBuilder("d", "p").Priority(3999)) == PriorityClass::kFree);
  // Outside the bands: the QoS.
  CHECK(PodPriorityClass(with_cpu().Priority(10000)) == PriorityClass::kProd);
  CHECK(PodPriorityClass(PodBuilder("d", "p").Priority(0)) == PriorityClass::kBatch);
  // The koordinator QoS label, then status.qosClass, then the containers.
  CHECK(PodPriorityClass(with_cpu().QosLabel("BE")) == PriorityClass::kBatch);
  CHECK(PodPriorityClass(PodBuilder("d", "p").QosLabel("LSR")) == PriorityClass::kProd);
  PodInput status_be = with_cpu();
  status_be.qos_class = "BestEffort";
  CHECK(PodPriorityClass(status_be) == PriorityClass::kBatch);
  PodInput status_odd = with_cpu();
  status_odd.qos_class = "Platinum";
  CHECK(PodPriorityClass(status_odd) == PriorityClass::kNone);
  // An init container's request makes the pod not BestEffort.
  PodInput init = PodBuilder("d", "p");
  init.init_containers.push_back(InitContainer{{{}, {{"memory", 1}}}, false});
  CHECK(PodPriorityClass(init) == PriorityClass::kProd);
}

TEST_CASE("TranslateResourceNameByPriorityClass") {
  CHECK(TranslateResourceName(PriorityClass::kProd, "cpu") == "cpu");
  CHECK(TranslateResourceName(PriorityClass::kNone, "nvidia.com/gpu") == "nvidia.com/gpu");
  CHECK(TranslateResourceName(PriorityClass::kBatch, "memory") == "kubernetes.io/batch-memory");
  CHECK(TranslateResourceName(PriorityClass::kMid, "cpu") == "kubernetes.io/mid-cpu");
  CHECK(TranslateResourceName(PriorityClass::kBatch, "nvidia.com/gpu").empty());
  CHECK(TranslateResourceName(PriorityClass::kFree, "cpu").empty());
}

TEST_CASE("PodRequests and PodLimits with init containers sidecars and overhead") {
  PodInput pod = Main(CpuMem(1000, 1 * kGi), CpuMem(2000, 0));
  // An init container alone: the larger of the sum and the init container.
  pod.init_containers.push_back(InitContainer{{CpuMem(3000, 0), {}}, false});
  CHECK(PodRequests(pod).at("cpu") == 3000);
  // A sidecar before it: it adds to the sum (1000 + 500) and runs beside the later init
  // container (3000 + 500 = 3500): 3500.
  pod.init_containers.insert(pod.init_containers.begin(),
                             InitContainer{{CpuMem(500, 0), {}}, true});
  CHECK(PodRequests(pod).at("cpu") == 3500);
  // Overhead adds to every request, and to limits that are set and not zero.
  pod.overhead = {{"cpu", 250}, {"memory", kMi}};
  CHECK(PodRequests(pod).at("cpu") == 3750);
  CHECK(PodRequests(pod).at("memory") == kGi + kMi);
  CHECK(PodLimits(pod).at("cpu") == 2250);
  CHECK(PodLimits(pod).at("memory") == 0);  // an explicit 0 limit gets no overhead
}

TEST_CASE("pod-level resources replace the containers' cpu and memory") {
  PodInput pod = Main(CpuMem(1000, kGi), CpuMem(1000, kGi));
  pod.pod_level_resources = ContainerResources{{{"cpu", 4000}}, {}};
  CHECK(PodRequests(pod).at("cpu") == 4000);
  CHECK(PodRequests(pod).at("memory") == kGi);  // not set at pod level: the containers'
  // Pod-level requests make pod-level limits apply too (none set here: containers').
  CHECK(PodLimits(pod).at("cpu") == 1000);
  // Estimate: max(4000 requested, 1000 limit) * 85% = 3400, held at the 1000m limit.
  CHECK(Estimate(pod).cpu == 1000);
}

TEST_CASE("upstream TestDefaultEstimatorEstimateNode") {
  const LoadAwareArgs args = Defaulted();
  const Vectorizer v = VectorizerFromArgs(args);
  const Estimator estimator(args, v);
  NodeInput node;
  // "estimate empty node": allocatable as it is.
  node.allocatable = {{"cpu", Cores(32)}};
  CHECK(estimator.NodeAllocatable(node)[*v.IndexOf("cpu")] == 32000);
  // "estimate node with original allocatable": raw-allocatable {"cpu":28,"memory":"32Gi"}
  // overrides 32 cores and 42 GiB.
  node.allocatable = CpuMem(Cores(32), 42 * kGi);
  node.raw_allocatable = CpuMem(Cores(28), 32 * kGi);
  CHECK(estimator.NodeAllocatable(node) == v.ToVec(CpuMem(Cores(28), 32 * kGi)));
  // "... and sames": equal lists, the same result.
  node.raw_allocatable = node.allocatable;
  CHECK(estimator.NodeAllocatable(node) == v.ToVec(CpuMem(Cores(32), 42 * kGi)));
}

// ---- TestShouldEstimatePodDeadline ------------------------------------------------------------
// The assignment time passed is now - 1 minute, as upstream.

std::optional<TimePoint> Deadline(const PodInput& pod, std::optional<int64_t> after_scheduled,
                                  std::optional<int64_t> after_initialized,
                                  bool allow_customize = false) {
  LoadAwareArgs args;
  args.estimated_seconds_after_pod_scheduled = after_scheduled;
  args.estimated_seconds_after_initialized = after_initialized;
  args.allow_customize_estimation = allow_customize;
  const Vectorizer v = VectorizerFromArgs(args);
  return Estimator(args, v).EstimationDeadline(pod, kNow - 1min);
}

TEST_CASE("upstream TestShouldEstimatePodDeadline") {
  const PodInput scheduled = PodBuilder("default", "pod").ScheduledAt(kNow - 1min);
  // "disabled".
  CHECK_FALSE(Deadline(scheduled, std::nullopt, std::nullopt).has_value());
  // "enabled for pod scheduled": 180 s after now - 1 min.
  CHECK(Deadline(scheduled, 180, std::nullopt) == kNow + 2min);
  // "disabled pod scheduled when pod initialized": initialized 30 s ago + 10 s.
  PodInput initialized = scheduled;
  initialized.initialized_time = kNow - 30s;
  CHECK(Deadline(initialized, 180, 10) == kNow - 20s);
  // "enabled for pod initialized".
  const PodInput init_1m = PodBuilder("default", "pod").InitializedAt(kNow - 1min);
  CHECK(Deadline(init_1m, std::nullopt, 180) == kNow + 2min);
  // "disabled for pod initialized when condition is not satisfied" (status False).
  CHECK_FALSE(Deadline(PodBuilder("default", "pod"), std::nullopt, 180).has_value());
  // "after pod scheduled from metadata".
  PodInput annotated = scheduled;
  annotated.custom_seconds_after_pod_scheduled = "180";
  CHECK(Deadline(annotated, std::nullopt, std::nullopt, true) == kNow + 2min);
  // "after initialized from metadata".
  PodInput annotated_init = init_1m;
  annotated_init.custom_seconds_after_initialized = "180";
  CHECK(Deadline(annotated_init, std::nullopt, std::nullopt, true) == kNow + 2min);
}

TEST_CASE("estimation annotations replace the args unless negative or unparsable") {
  PodInput pod = PodBuilder("default", "pod").ScheduledAt(kNow - 1min);
  pod.custom_seconds_after_pod_scheduled = "0";  // 0 is not negative: it switches it off
  CHECK_FALSE(Deadline(pod, 180, std::nullopt, true).has_value());
  pod.custom_seconds_after_pod_scheduled = "-5";  // negative: the args' 180 s
  CHECK(Deadline(pod, 180, std::nullopt, true) == kNow + 2min);
  pod.custom_seconds_after_pod_scheduled = "3m";  // unparsable: the args'
  CHECK(Deadline(pod, 180, std::nullopt, true) == kNow + 2min);
  pod.custom_seconds_after_pod_scheduled = "30";  // not allowed: ignored
  CHECK(Deadline(pod, 180, std::nullopt, false) == kNow + 2min);
}

TEST_CASE("strconv.ParseInt base 10") {
  CHECK(ParseGoInt64("180") == 180);
  CHECK(ParseGoInt64("+5") == 5);
  CHECK(ParseGoInt64("-5") == -5);
  CHECK(ParseGoInt64("007") == 7);
  CHECK(ParseGoInt64("9223372036854775807") == INT64_MAX);
  CHECK(ParseGoInt64("-9223372036854775808") == INT64_MIN);
  CHECK_FALSE(ParseGoInt64("9223372036854775808").has_value());
  CHECK_FALSE(ParseGoInt64("").has_value());
  CHECK_FALSE(ParseGoInt64("+-5").has_value());
  CHECK_FALSE(ParseGoInt64(" 5").has_value());
  CHECK_FALSE(ParseGoInt64("5s").has_value());
  CHECK_FALSE(ParseGoInt64("1_000").has_value());
}

TEST_CASE("time.Duration seconds wrap as in Go") {
  CHECK(AddGoSeconds(kNow, 60) == kNow + 60s);
  // 9223372037 s * 1e9 overflows int64 and wraps negative: far in the past.
  CHECK(AddGoSeconds(kNow, 9'223'372'037) < kNow);
}

}  // namespace
}  // namespace qrm::cluster::loadaware::testing
