// The metric store against hand-computed windows: exact figures from raw samples inside the
// raw horizon, bucket means and maxima beyond it, gaps never filled in, late and repeated
// samples, fixed memory, garbage collection of gone series and option validation.
#include "advisor/store/metric_store.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

StoreOptions Options() {
  StoreOptions o;  // 1 s raw for 5 min, 10 s buckets for 30 min
  REQUIRE(o.Validate().ok());
  return o;
}

TEST_CASE("inside the raw horizon a window's figures are exact", "[advisor][store]") {
  MetricStore store(Options());
  for (int t = 1; t <= 600; ++t) store.Add("node/cpu", t, t);
  auto a = store.Query("node/cpu", 600, 300);  // (300, 600]: 301..600
  REQUIRE(a);
  CHECK_FALSE(a->from_buckets);
  CHECK(a->count == 300);
  CHECK(a->avg == Approx(450.5));
  CHECK(a->p50 == 450);  // nearest rank: the 150th of 300
  CHECK(a->p90 == 570);
  CHECK(a->p95 == 585);
  CHECK(a->p99 == 597);
  CHECK(a->max == 600);
}

TEST_CASE("beyond the raw horizon a window uses the buckets' means and maxima",
          "[advisor][store]") {
  MetricStore store(Options());
  // Each 10 s bucket holds 1 (nine times) and 11: mean 2, max 11.
  for (int t = 0; t < 1800; ++t) store.Add("pod/a", t, t % 10 == 5 ? 11 : 1);
  auto a = store.Query("pod/a", 1799, 1800);
  REQUIRE(a);
  CHECK(a->from_buckets);
  CHECK(a->count == 180);
  CHECK(a->avg == Approx(2));
  CHECK(a->p99 == Approx(2));
  CHECK(a->max == 11);
}

TEST_CASE("missing samples are absent, never invented", "[advisor][store]") {
  MetricStore store(Options());
  for (int t = 1; t <= 100; ++t) {
    if (t % 2 == 0) store.Add("s", t, 5);  // every other second only
  }
  auto a = store.Query("s", 100, 60);
  REQUIRE(a);
  CHECK(a->count == 30);
  CHECK_FALSE(store.Query("s", 1000, 60));  // nothing in (940, 1000]
  CHECK_FALSE(store.Query("other", 100, 60));
}

TEST_CASE("a repeated second replaces its sample; one too old to keep is dropped",
          "[advisor][store]") {
  MetricStore store(Options());
  store.Add("s", 1000, 1);
  store.Add("s", 1000, 3);
  store.Add("s", 600, 100);  // more than the raw horizon before the newest: dropped
  store.Add("s", 999, NAN);  // a NaN value is dropped
  auto a = store.Query("s", 1000, 300);
  REQUIRE(a);
  CHECK(a->count == 1);
  CHECK(a->max == 3);
}

TEST_CASE("memory is fixed: an hour of samples keeps only the horizons", "[advisor][store]") {
  MetricStore store(Options());
  for (int t = 0; t < 3600; ++t) store.Add("s", t, 1);
  CHECK(store.Query("s", 3599, 300)->count == 300);
  CHECK(store.Query("s", 3599, 3600)->count == 180);  // the 30 minutes of buckets
}

TEST_CASE("series with nothing new for gc_after are dropped", "[advisor][store]") {
  MetricStore store(Options());
  store.Add("gone", 100, 1);
  store.Add("alive", 500, 1);
  CHECK(store.CollectGarbage(450) == 1);
  CHECK(store.series_count() == 1);
  CHECK(store.Query("alive", 500, 60));
}

TEST_CASE("store options out of range are refused naming the field", "[advisor][store]") {
  StoreOptions o;
  o.ring.interval_s = 0;
  CHECK(o.Validate().message().find("interval") != std::string::npos);
  o = StoreOptions{};
  o.ring.bucket_s = 15;
  o.ring.bucket_horizon_s = 1800;  // not a multiple of 15? it is: 120 buckets
  CHECK(o.Validate().ok());
  o.ring.bucket_horizon_s = 1810;
  CHECK(o.Validate().message().find("bucket_horizon") != std::string::npos);
  o = StoreOptions{};
  o.ring.raw_horizon_s = 7 * 86400;
  CHECK(o.Validate().message().find("86400") != std::string::npos);
  o = StoreOptions{};
  o.ring.bucket_s = 600;  // longer than the raw horizon: its samples could not be summarized
  o.ring.bucket_horizon_s = 3600;
  CHECK(o.Validate().message().find("bucket: invalid value 600 s") != std::string::npos);
}

TEST_CASE("a bucket reads the same before and after its summary is stored", "[advisor][store]") {
  MetricStore store(Options());
  for (int t = 0; t < 20; ++t) store.Add("s", t, static_cast<double>(t));  // means 4.5, 14.5
  auto early = store.Query("s", 19, 600);
  REQUIRE(early);
  CHECK(early->count == 2);
  CHECK(early->avg == Approx(9.5));
  CHECK(early->max == 19);
  store.Add("s", 400, 0);  // the first two buckets leave the raw ring: summarized now
  auto late = store.Query("s", 19, 600);
  REQUIRE(late);
  CHECK(late->count == 2);
  CHECK(late->avg == early->avg);
  CHECK(late->max == early->max);
}

TEST_CASE("a replaced sample is replaced in its bucket; a summarized bucket takes no more",
          "[advisor][store]") {
  MetricStore store(Options());
  for (int t = 0; t < 10; ++t) store.Add("s", t, 1);
  store.Add("s", 5, 21);    // replaces the 1 at second 5: the bucket's mean is 3
  store.Add("s", 301, 1);   // the bucket [0, 10) starts to leave the raw ring
  store.Add("s", 9, 1000);  // still within the raw horizon, but its bucket is summarized
  auto a = store.Query("s", 9, 600);
  REQUIRE(a);
  CHECK(a->count == 1);
  CHECK(a->avg == Approx(3));
  CHECK(a->max == 21);
}

TEST_CASE("after a gap longer than every horizon only the new samples remain", "[advisor][store]") {
  MetricStore store(Options());
  for (int t = 0; t < 100; ++t) store.Add("s", t, 7);
  store.Add("s", 10000, 2);
  auto a = store.Query("s", 10000, 1800);
  REQUIRE(a);
  CHECK(a->count == 1);
  CHECK(a->max == 2);
  CHECK(store.Query("s", 10000, 300)->count == 1);
}

}  // namespace
}  // namespace qrm::advisor
