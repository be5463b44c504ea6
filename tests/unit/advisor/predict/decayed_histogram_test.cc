// Decayed histograms against hand-computed cases: Koordinator's bucket counts, percentiles at
// bucket edges, decay by half-life, rebasing far in the future, and option validation.
#include "advisor/predict/decayed_histogram.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "advisor/predict/decayed_moments.h"
#include "advisor/predict/koordinator_model.h"

namespace qrm::advisor {
namespace {

TEST_CASE("Koordinator's CPU and memory histograms have 158 and 205 buckets", "[advisor][hist]") {
  CHECK(DecayedHistogram(KoordinatorOptions::For(Resource::kCpu).histogram).bucket_count() == 158);
  CHECK(DecayedHistogram(KoordinatorOptions::For(Resource::kMemory).histogram).bucket_count() ==
        205);
}

TEST_CASE("buckets grow by the ratio from the first bucket", "[advisor][hist]") {
  DecayedHistogram h(HistogramOptions{});  // 0.025, 1.05
  CHECK(h.BucketStart(0) == 0);
  CHECK(h.BucketStart(1) == Approx(0.025));
  CHECK(h.BucketStart(2) == Approx(0.025 + 0.025 * 1.05));
  CHECK(h.BucketOf(0) == 0);
  CHECK(h.BucketOf(0.0249) == 0);
  CHECK(h.BucketOf(0.025) == 1);
  // 1.0: log(1 * 0.05 / 0.025 + 1) / log(1.05) = log(3) / log(1.05) = 22.5
  CHECK(h.BucketOf(1.0) == 22);
  CHECK(h.BucketOf(1e9) == h.bucket_count() - 1);  // beyond max_value: the last bucket
}

TEST_CASE("a percentile is the upper edge of the bucket reaching q of the weight",
          "[advisor][hist]") {
  DecayedHistogram h(HistogramOptions{});
  CHECK(h.empty());
  CHECK(h.Percentile(0.95) == 0);
  h.Add(0.01, 1, 1000);
  h.Add(1.0, 1, 1000);
  CHECK(h.Percentile(0.5) == Approx(0.025));               // bucket 0's upper edge
  CHECK(h.Percentile(0.95) == Approx(h.BucketStart(23)));  // 1.0's bucket (22), upper edge
  CHECK(h.Percentile(0.95) == Approx(0.5 * (std::pow(1.05, 23) - 1)));
  CHECK(h.Percentile(0) == Approx(0.025));
  CHECK(h.Percentile(1) == Approx(h.BucketStart(23)));
}

TEST_CASE("a sample one half-life newer weighs twice as much", "[advisor][hist]") {
  HistogramOptions o;
  o.half_life_s = 3600;
  DecayedHistogram h(o);
  h.Add(1.0, 1, 0);
  h.Add(4.0, 1, 3600);  // weight 2: the median moves to 4.0's bucket
  CHECK(h.TotalWeight() == Approx(3));
  CHECK(h.Percentile(0.5) == Approx(h.BucketStart(h.BucketOf(4.0) + 1)));
  CHECK(h.Percentile(0.3) == Approx(h.BucketStart(h.BucketOf(1.0) + 1)));
  // Without the decay the median would be 1.0's bucket.
  DecayedHistogram flat(o);
  flat.Add(1.0, 1, 0);
  flat.Add(4.0, 1, 0);
  CHECK(flat.Percentile(0.5) == Approx(flat.BucketStart(flat.BucketOf(1.0) + 1)));
}

TEST_CASE("far newer samples rebase the histogram and old weight fades out", "[advisor][hist]") {
  HistogramOptions o;
  o.half_life_s = 60;
  DecayedHistogram h(o);
  h.Add(8.0, 1, 0);
  h.Add(0.5, 1, 60 * 100);  // 100 half-lives later: 8.0's weight is 2^-100 of this one's
  CHECK(h.reference_time() > 0);
  CHECK(h.Percentile(1.0) == Approx(h.BucketStart(h.BucketOf(0.5) + 1)));
  CHECK(h.TotalWeight() == Approx(std::exp2(static_cast<double>(6000 - h.reference_time()) / 60)));
}

TEST_CASE("only the run of non-empty buckets is stored and it answers as a dense one",
          "[advisor][hist]") {
  HistogramOptions o;
  o.half_life_s = 60;
  DecayedHistogram h(o);
  CHECK(h.stored_bucket_count() == 0);
  h.Add(1.0, 1, 0);
  CHECK(h.stored_bucket_count() == 1);
  h.Add(2.0, 1, 0);  // widens upwards
  h.Add(0.5, 1, 0);  // and downwards
  const size_t low = h.BucketOf(0.5), high = h.BucketOf(2.0);
  CHECK(h.stored_bucket_count() == high - low + 1);
  const std::vector<double> dense = h.weights();
  REQUIRE(dense.size() == h.bucket_count());
  CHECK(dense[low] == 1);
  CHECK(dense[h.BucketOf(1.0)] == 1);
  CHECK(dense[high] == 1);
  CHECK(dense[low - 1] == 0);
  CHECK(dense[high + 1] == 0);
  CHECK(h.Percentile(0.0) == Approx(h.UpperEdge(low)));
  CHECK(h.Percentile(0.5) == Approx(h.UpperEdge(h.BucketOf(1.0))));
  CHECK(h.Percentile(1.0) == Approx(h.UpperEdge(high)));
  // 100 half-lives on, the old buckets fall below min_weight at the rebase: the run shrinks to
  // the new sample's bucket.
  h.Add(8.0, 1, 6000);
  CHECK(h.stored_bucket_count() == 1);
  CHECK(h.Percentile(0.0) == Approx(h.UpperEdge(h.BucketOf(8.0))));
  // A restore keeps only the run too, and gives back the same dense weights.
  DecayedHistogram restored(o);
  REQUIRE(restored.Restore(0, dense).ok());
  CHECK(restored.stored_bucket_count() == high - low + 1);
  CHECK(restored.weights() == dense);
  CHECK(restored.Percentile(0.5) == Approx(h.UpperEdge(h.BucketOf(1.0))));
}

TEST_CASE("histogram options out of range are refused naming the field", "[advisor][hist]") {
  HistogramOptions o;
  o.ratio = 1.0;
  CHECK(o.Validate().message().find("ratio") != std::string::npos);
  o = HistogramOptions{};
  o.first_bucket = 0;
  CHECK(o.Validate().message().find("first_bucket") != std::string::npos);
  o = HistogramOptions{};
  o.half_life_s = -1;
  CHECK(o.Validate().message().find("half_life") != std::string::npos);
  o = HistogramOptions{};
  o.first_bucket = 0.0001;  // tiny buckets growing by almost nothing: millions of them
  o.ratio = 1.000001;
  CHECK(o.Validate().message().find("buckets") != std::string::npos);
  CHECK(HistogramOptions{}.Validate().ok());
}

TEST_CASE("restoring weights that do not fit the options is refused", "[advisor][hist]") {
  DecayedHistogram h(HistogramOptions{});
  CHECK_FALSE(h.Restore(0, std::vector<double>(3, 1.0)).ok());
  std::vector<double> w(h.bucket_count(), 0.0);
  w[5] = -1;
  CHECK_FALSE(h.Restore(0, w).ok());
  w[5] = 2;
  REQUIRE(h.Restore(120, w).ok());
  CHECK(h.TotalWeight() == Approx(2));
  CHECK(h.Percentile(0.5) == Approx(h.BucketStart(6)));
}

}  // namespace
}  // namespace qrm::advisor

namespace qrm::advisor {
namespace {

TEST_CASE("decayed moments weigh newer samples more, and survive rebasing", "[advisor][hist]") {
  DecayedMoments m(3600);
  CHECK(m.empty());
  m.Add(0, 0);
  m.Add(3, 3600);  // weight 2: mean (0 + 2 * 3) / 3 = 2
  CHECK(m.Mean() == Approx(2));
  // Population variance: (1 * 4 + 2 * 1) / 3 = 2.
  CHECK(m.Stdev() == Approx(std::sqrt(2.0)));
  // 100 half-lives later the old samples no longer count.
  m.Add(10, 3600 * 100);
  CHECK(m.Mean() == Approx(10).epsilon(1e-9));
  CHECK(m.Stdev() == Approx(0).margin(1e-6));
}

TEST_CASE("the last bucket's percentile is its start, not an edge above max_value",
          "[advisor][hist]") {
  DecayedHistogram h(HistogramOptions{});
  h.Add(5000, 1, 0);  // above max_value (1024): the last bucket
  CHECK(h.Percentile(0.95) == Approx(h.BucketStart(h.bucket_count() - 1)));
  CHECK(h.Percentile(0.95) < h.BucketStart(h.bucket_count()));
}

TEST_CASE("negative times round their reference down", "[advisor][hist]") {
  HistogramOptions o;
  o.half_life_s = 100;
  DecayedHistogram h(o);
  h.Add(1, 1, -150);
  CHECK(h.reference_time() == -200);
  CHECK(h.TotalWeight() == Approx(std::exp2(0.5)));
}

}  // namespace
}  // namespace qrm::advisor
