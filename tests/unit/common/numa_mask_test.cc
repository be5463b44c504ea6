#include "common/numa_mask.h"

#include <vector>

#include <catch2/catch.hpp>

namespace qrm {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("NumaMask::FromNodes", "[numa_mask]") {
  StatusOr<NumaMask> m = NumaMask::FromNodes({0, 2});
  REQUIRE(m.ok());
  CHECK(m->bits() == 0b101);

  StatusOr<NumaMask> top = NumaMask::FromNodes({63});
  REQUIRE(top.ok());
  CHECK(top->bits() == uint64_t{1} << 63);
  CHECK(top->Has(63));

  StatusOr<NumaMask> too_big = NumaMask::FromNodes({1, 64});
  REQUIRE_FALSE(too_big.ok());
  CHECK(too_big.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(too_big.status().message(), Contains("64"));

  StatusOr<NumaMask> negative = NumaMask::FromNodes({-1});
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(negative.status().message(), Contains("-1"));

  StatusOr<NumaMask> huge = NumaMask::FromNodes({int64_t{1} << 40});
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.status().message(), Contains("1099511627776"));

  StatusOr<NumaMask> empty = NumaMask::FromNodes({});
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("NumaMask::Parse", "[numa_mask]") {
  StatusOr<NumaMask> m = NumaMask::Parse("0-1,3");
  REQUIRE(m.ok());
  CHECK(m->bits() == 0b1011);

  StatusOr<NumaMask> all = NumaMask::Parse("0-63");
  REQUIRE(all.ok());
  CHECK(all->bits() == ~uint64_t{0});
  CHECK(*all == NumaMask::FirstN(64));

  StatusOr<NumaMask> high = NumaMask::Parse("32-63");
  REQUIRE(high.ok());
  CHECK(high->bits() == 0xFFFFFFFF00000000ULL);

  StatusOr<NumaMask> empty = NumaMask::Parse("");
  REQUIRE(empty.ok());
  CHECK(empty->empty());

  SECTION("id 64 is rejected") {
    StatusOr<NumaMask> r = NumaMask::Parse("0,64");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message() == "NUMA node list \"0,64\": id 64 exceeds the maximum 63");
  }
  SECTION("caller's node count bounds ids") {
    CHECK(NumaMask::Parse("0-1", 2).ok());
    StatusOr<NumaMask> r = NumaMask::Parse("0-2", 2);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Contains("NUMA node list \"0-2\""));
    CHECK_THAT(r.status().message(), Contains("id 2 exceeds the maximum 1"));
  }
  SECTION("node counts above 64 are capped") {
    CHECK(NumaMask::Parse("63", 1000).ok());
    CHECK_FALSE(NumaMask::Parse("64", 1000).ok());
  }
  SECTION("malformed") {
    for (const char* text : {"3-1", "1,,2", ",1", "1,", "a", "-1", "1-", " 1", "1 ", "+1", "0x1",
                             "0\n", "99999999999999999999"}) {
      StatusOr<NumaMask> r = NumaMask::Parse(text);
      INFO(text);
      REQUIRE_FALSE(r.ok());
      CHECK(r.status().code() == StatusCode::kInvalidArgument);
      CHECK_THAT(r.status().message(), Contains("NUMA node list"));
    }
  }
}

TEST_CASE("NumaMask::Nodes and ToString", "[numa_mask]") {
  CHECK(NumaMask().Nodes().empty());
  CHECK(NumaMask().ToString() == "");
  CHECK(NumaMask::FromBits(0b1011).Nodes() == std::vector<int>{0, 1, 3});
  CHECK(NumaMask::FromBits(0b1011).ToString() == "0-1,3");
  CHECK(NumaMask::FromBits(0b1).ToString() == "0");
  CHECK(NumaMask::FromBits(0b11).ToString() == "0-1");
  CHECK(NumaMask::FromBits(0b101).ToString() == "0,2");
  CHECK(NumaMask::FirstN(64).ToString() == "0-63");
  CHECK(NumaMask::FromBits(uint64_t{1} << 63).Nodes() == std::vector<int>{63});
  CHECK(NumaMask::FromBits(uint64_t{1} << 63).ToString() == "63");

  // Round trip over many masks.
  uint64_t bits = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 200; ++i) {
    bits = bits * 6364136223846793005ULL + 1442695040888963407ULL;  // LCG, fixed seed
    const uint64_t value = bits >> (i % 64);                        // vary the width too
    const NumaMask m = NumaMask::FromBits(value);
    StatusOr<NumaMask> back = NumaMask::Parse(m.ToString());
    INFO(m.ToString());
    REQUIRE(back.ok());
    CHECK(back->bits() == value);
    const std::vector<int> ids = m.Nodes();
    std::vector<int64_t> nodes(ids.begin(), ids.end());
    StatusOr<NumaMask> from_nodes = NumaMask::FromNodes(nodes);
    REQUIRE(from_nodes.ok());
    CHECK(*from_nodes == m);
  }
}

TEST_CASE("NumaMask::IsNarrowerThan follows kubelet ordering", "[numa_mask]") {
  const NumaMask n0 = NumaMask::FromBits(0b0001);
  const NumaMask n1 = NumaMask::FromBits(0b0010);
  const NumaMask n01 = NumaMask::FromBits(0b0011);
  const NumaMask n23 = NumaMask::FromBits(0b1100);
  const NumaMask n012 = NumaMask::FromBits(0b0111);

  // Fewer nodes is narrower, whatever the integer values.
  CHECK(n1.IsNarrowerThan(n01));
  CHECK_FALSE(n01.IsNarrowerThan(n1));
  CHECK(n23.IsNarrowerThan(n012));  // 0b1100 > 0b0111 as integers, but has fewer nodes
  CHECK(NumaMask::FromBits(uint64_t{1} << 63).IsNarrowerThan(n01));

  // Equal counts compare as integers: lower-numbered nodes win.
  CHECK(n0.IsNarrowerThan(n1));
  CHECK_FALSE(n1.IsNarrowerThan(n0));
  CHECK(n01.IsNarrowerThan(n23));
  CHECK_FALSE(n23.IsNarrowerThan(n01));

  // Strict: a mask is not narrower than itself.
  CHECK_FALSE(n01.IsNarrowerThan(n01));
}

TEST_CASE("NumaMask bit operations", "[numa_mask]") {
  const NumaMask a = NumaMask::FromBits(0b0011);
  const NumaMask b = NumaMask::FromBits(0b0110);
  CHECK(a.And(b).bits() == 0b0010);
  CHECK(a.Or(b).bits() == 0b0111);
  CHECK(a.With(5).bits() == 0b100011);
  CHECK(a.Count() == 2);
  CHECK(a.IsSubsetOf(a.Or(b)));
  CHECK_FALSE(a.IsSubsetOf(b));
  CHECK_FALSE(a.Has(-1));
  CHECK_FALSE(a.Has(64));
  CHECK(NumaMask::FirstN(0).empty());
  CHECK(NumaMask::FirstN(3).bits() == 0b111);
}

}  // namespace
}  // namespace qrm
