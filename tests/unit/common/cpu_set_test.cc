#include "common/cpu_set.h"

#include <algorithm>
#include <iterator>
#include <random>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "common/id_list.h"

namespace qrm {
namespace {

using Catch::Matchers::Contains;

CpuSet ParseOk(std::string_view text, int max_cpu_id = CpuSet::kDefaultMaxCpuId) {
  StatusOr<CpuSet> r = CpuSet::Parse(text, max_cpu_id);
  INFO("text: \"" << std::string(text) << "\" status: " << r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

std::vector<int> ToVector(const std::set<int>& s) {
  return {s.begin(), s.end()};
}

TEST_CASE("CpuSet basics", "[cpu_set]") {
  CpuSet s;
  CHECK(s.Empty());
  CHECK(s.Size() == 0);
  CHECK_FALSE(s.First().has_value());
  CHECK(s.ToString() == "");
  CHECK(s.begin() == s.end());

  s.Add(3);
  s.Add(1);
  s.Add(3);
  CHECK_FALSE(s.Empty());
  CHECK(s.Size() == 2);
  CHECK(s.Contains(1));
  CHECK(s.Contains(3));
  CHECK_FALSE(s.Contains(2));
  CHECK_FALSE(s.Contains(-1));
  CHECK_FALSE(s.Contains(100000));
  CHECK(s.First() == 1);
  CHECK(s.Ids() == std::vector<int>{1, 3});

  s.Remove(1);
  s.Remove(2);       // absent: no-op
  s.Remove(100000);  // beyond storage: no-op
  s.Remove(-5);
  CHECK(s.Ids() == std::vector<int>{3});
  s.Remove(3);
  CHECK(s.Empty());
  CHECK(s == CpuSet{});
}

TEST_CASE("CpuSet equality ignores how the set was built", "[cpu_set]") {
  CpuSet a{1, 2};
  CpuSet b{1, 2, 4000};
  b.Remove(4000);  // storage shrinks back, so == still compares members only
  CHECK(a == b);
  CHECK(CpuSet{5} != CpuSet{6});
  CHECK(CpuSet{0, 64}.Difference(CpuSet{64}) == CpuSet{0});
  CHECK(CpuSet{0, 64}.Intersection(CpuSet{0, 65}) == CpuSet{0});
}

TEST_CASE("CpuSet iteration is ascending", "[cpu_set]") {
  const CpuSet s{4095, 0, 63, 64, 127, 128, 7};
  std::vector<int> seen;
  for (int cpu : s) seen.push_back(cpu);
  CHECK(seen == std::vector<int>{0, 7, 63, 64, 127, 128, 4095});
  CHECK(std::distance(s.begin(), s.end()) == 7);
  auto it = s.begin();
  CHECK(*it++ == 0);
  CHECK(*it == 7);
  CHECK(std::find(s.begin(), s.end(), 127) != s.end());
}

TEST_CASE("CpuSet handles large ids", "[cpu_set]") {
  CpuSet s{4095};
  CHECK(s.Size() == 1);
  CHECK(s.Contains(4095));
  CHECK_FALSE(s.Contains(4094));
  CHECK(s.First() == 4095);
  CHECK(s.ToString() == "4095");
  CHECK(ParseOk("4095") == s);
  CHECK(ParseOk("4000-4095").Size() == 96);
  CHECK(ParseOk("8191").Contains(8191));
  CHECK(ParseOk("0-8191").Size() == 8192);
  CHECK(ParseOk("0-8191").ToString() == "0-8191");
}

TEST_CASE("CpuSet::AddRange sets exactly the range across word boundaries", "[cpu_set]") {
  for (int first : {0, 1, 62, 63, 64, 65, 127, 128}) {
    for (int last : {first, first + 1, 63, 64, 127, 128, 200, 255, 256}) {
      if (last < first) continue;
      CpuSet s;
      s.AddRange(first, last);
      INFO(first << "-" << last);
      CHECK(s.Size() == last - first + 1);
      CHECK(s.First() == first);
      CHECK_FALSE(s.Contains(first - 1));
      CHECK_FALSE(s.Contains(last + 1));
      CHECK(s.Contains(last));
    }
  }
  CpuSet s;
  s.AddRange(5, 4);  // empty range
  CHECK(s.Empty());
}

TEST_CASE("CpuSet::Parse", "[cpu_set]") {
  CHECK(ParseOk("").Empty());
  CHECK(ParseOk("0-3,8-11").Ids() == std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11});
  CHECK(ParseOk("5") == CpuSet{5});
  CHECK(ParseOk("0-3,2-5") == ParseOk("0-5"));  // overlaps are a union
  CHECK(ParseOk("1,1") == CpuSet{1});
  CHECK(ParseOk(TrimSysfsValue("0-3\n")) == CpuSet{0, 1, 2, 3});

  SECTION("errors name the list and the reason") {
    StatusOr<CpuSet> r = CpuSet::Parse("0-3,5-2");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message() == "cpu list \"0-3,5-2\": range \"5-2\" starts above its end");
  }
  SECTION("default maximum is 8191") {
    StatusOr<CpuSet> r = CpuSet::Parse("0-9000");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message() == "cpu list \"0-9000\": id 9000 exceeds the maximum 8191");
    CHECK_FALSE(CpuSet::Parse("8192").ok());
  }
  SECTION("caller maximum") {
    CHECK(ParseOk("0-127", 127).Size() == 128);
    StatusOr<CpuSet> r = CpuSet::Parse("128", 127);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Contains("id 128 exceeds the maximum 127"));
  }
  SECTION("trailing newline is rejected") {
    StatusOr<CpuSet> r = CpuSet::Parse("0-3\n");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
  }
  SECTION("overflow") {
    StatusOr<CpuSet> r = CpuSet::Parse("99999999999999999999");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Contains("99999999999999999999"));
  }
}

TEST_CASE("CpuSet::FromIds validates ids", "[cpu_set]") {
  StatusOr<CpuSet> ok = CpuSet::FromIds(std::vector<int>{3, 1, 3, 8191});
  REQUIRE(ok.ok());
  CHECK(ok->Ids() == std::vector<int>{1, 3, 8191});

  StatusOr<CpuSet> neg = CpuSet::FromIds(std::vector<int>{1, -1});
  REQUIRE_FALSE(neg.ok());
  CHECK(neg.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(neg.status().message(), Contains("cpu id -1"));

  StatusOr<CpuSet> big = CpuSet::FromIds(std::vector<int>{8192});
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.status().message(), Contains("cpu id 8192"));

  CHECK(CpuSet::FromIds(std::vector<int>{16}, 16).ok());
  CHECK_FALSE(CpuSet::FromIds(std::vector<int>{17}, 16).ok());
}

TEST_CASE("CpuSet::ToString is canonical", "[cpu_set]") {
  CHECK(ParseOk("0,1,2,3").ToString() == "0-3");
  CHECK(ParseOk("5,3").ToString() == "3,5");
  CHECK(ParseOk("1,3").ToString() == "1,3");
  CHECK(ParseOk("0,1").ToString() == "0-1");  // the kernel prints runs of two as ranges
  CHECK(ParseOk("0-1,3,4-4,5").ToString() == "0-1,3-5");
  CHECK(ParseOk("8-11,0-3").ToString() == "0-3,8-11");
  CHECK(ParseOk("0-3,2-5").ToString() == "0-5");
  CHECK(ParseOk("007").ToString() == "7");
  CHECK(ParseOk("62-65").ToString() == "62-65");  // run across a word boundary
  CHECK(CpuSet{63, 64}.ToString() == "63-64");
  CHECK(CpuSet{0, 2, 4, 4095}.ToString() == "0,2,4,4095");
}

TEST_CASE("CpuSet set operations", "[cpu_set]") {
  const CpuSet a = ParseOk("0-7");
  const CpuSet b = ParseOk("4-11");
  const CpuSet c = ParseOk("100-103");
  const CpuSet empty;

  CHECK(a.Union(b) == ParseOk("0-11"));
  CHECK(a.Intersection(b) == ParseOk("4-7"));
  CHECK(a.Difference(b) == ParseOk("0-3"));
  CHECK(b.Difference(a) == ParseOk("8-11"));
  CHECK(a.Union(c).ToString() == "0-7,100-103");
  CHECK(c.Union(a) == a.Union(c));
  CHECK(a.Intersection(c).Empty());
  CHECK(a.Difference(c) == a);
  CHECK(c.Difference(a) == c);
  CHECK(a.Union(empty) == a);
  CHECK(empty.Union(a) == a);
  CHECK(a.Intersection(empty).Empty());
  CHECK(a.Difference(empty) == a);
  CHECK(empty.Difference(a).Empty());
  CHECK(a.Difference(a).Empty());

  CHECK(ParseOk("4-7").IsSubsetOf(a));
  CHECK(a.IsSubsetOf(a));
  CHECK(empty.IsSubsetOf(a));
  CHECK(empty.IsSubsetOf(empty));
  CHECK_FALSE(a.IsSubsetOf(b));
  CHECK_FALSE(a.IsSubsetOf(empty));
  CHECK_FALSE(c.IsSubsetOf(a));  // c is stored in more words than a
  CHECK(CpuSet{1}.IsSubsetOf(ParseOk("0-1,4000")));

  CHECK(a.Overlaps(b));
  CHECK(b.Overlaps(a));
  CHECK_FALSE(a.Overlaps(c));
  CHECK_FALSE(a.Overlaps(empty));
  CHECK_FALSE(empty.Overlaps(empty));
  CHECK(CpuSet{4095}.Overlaps(ParseOk("4000-4095")));
}

// Builds a random set and its reference model. Density varies per iteration so both sparse
// sets (many singletons) and dense sets (long runs) are covered.
std::pair<CpuSet, std::set<int>> RandomSet(std::mt19937& rng) {
  std::uniform_int_distribution<int> max_dist(0, 4095);
  std::uniform_int_distribution<int> density_dist(0, 100);
  const int max_id = max_dist(rng);
  const int density = density_dist(rng);
  std::uniform_int_distribution<int> percent(0, 99);
  CpuSet set;
  std::set<int> model;
  for (int id = 0; id <= max_id; ++id) {
    if (percent(rng) < density) {
      set.Add(id);
      model.insert(id);
    }
  }
  return {set, model};
}

TEST_CASE("CpuSet round-trips through its text form and matches a std::set model", "[cpu_set]") {
  std::mt19937 rng(20240601);  // fixed seed: failures must reproduce
  for (int iteration = 0; iteration < 300; ++iteration) {
    const auto [a, ma] = RandomSet(rng);
    const auto [b, mb] = RandomSet(rng);
    INFO("iteration " << iteration << " a=" << a.ToString() << " b=" << b.ToString());

    REQUIRE(a.Ids() == ToVector(ma));
    REQUIRE(a.Size() == static_cast<int>(ma.size()));
    REQUIRE(ParseOk(a.ToString()) == a);
    REQUIRE(ParseOk(a.ToString()).ToString() == a.ToString());
    // The formatter used by NumaMask agrees with CpuSet's own.
    REQUIRE(FormatIdList(a.Ids()) == a.ToString());

    std::vector<int> expected;
    std::set_union(ma.begin(), ma.end(), mb.begin(), mb.end(), std::back_inserter(expected));
    REQUIRE(a.Union(b).Ids() == expected);
    expected.clear();
    std::set_intersection(ma.begin(), ma.end(), mb.begin(), mb.end(), std::back_inserter(expected));
    REQUIRE(a.Intersection(b).Ids() == expected);
    REQUIRE(a.Overlaps(b) == !expected.empty());
    expected.clear();
    std::set_difference(ma.begin(), ma.end(), mb.begin(), mb.end(), std::back_inserter(expected));
    REQUIRE(a.Difference(b).Ids() == expected);
    REQUIRE(a.IsSubsetOf(b) == std::includes(mb.begin(), mb.end(), ma.begin(), ma.end()));
    REQUIRE(a.Intersection(b).IsSubsetOf(a));
    REQUIRE(a.Difference(b).Union(a.Intersection(b)) == a);
  }
}

}  // namespace
}  // namespace qrm
