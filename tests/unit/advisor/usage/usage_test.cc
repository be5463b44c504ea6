// The advisor's vocabulary: names round-trip, bad names are refused naming the value, and
// system usage is what no pod accounts for (never negative).
#include "advisor/usage/usage.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

TEST_CASE("resource and priority class names round-trip; others are refused by value",
          "[advisor][usage]") {
  for (Resource r : {Resource::kCpu, Resource::kMemory}) {
    auto parsed = ParseResource(ResourceName(r));
    REQUIRE(parsed.ok());
    CHECK(*parsed == r);
  }
  for (PriorityClass c :
       {PriorityClass::kProd, PriorityClass::kMid, PriorityClass::kBatch, PriorityClass::kFree}) {
    auto parsed = ParsePriorityClass(PriorityClassName(c));
    REQUIRE(parsed.ok());
    CHECK(*parsed == c);
  }
  auto bad = ParsePriorityClass("gold");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("\"gold\"") != std::string::npos);
  CHECK_FALSE(ParseResource("gpu").ok());
}

TEST_CASE("system usage is the node minus its pods, never below zero", "[advisor][usage]") {
  Observation o;
  o.node = 10;
  o.pods = {{"a", PriorityClass::kProd, 0, 3, 4, 0}, {"b", PriorityClass::kBatch, 0, 4, 4, 0}};
  CHECK(o.PodsUsage() == Approx(7));
  CHECK(o.System() == Approx(3));
  o.node = 5;  // pods sampled a moment apart from the node can add up to more
  CHECK(o.System() == 0);
}

}  // namespace
}  // namespace qrm::advisor
