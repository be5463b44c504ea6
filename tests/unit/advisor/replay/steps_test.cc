// The replay's step rules: grid alignment, p90 and max of a step's raw samples, the node as
// the sum of its pods when a trace has no machine-level rows, and bad rules refused.
#include "advisor/replay/steps.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

TEST_CASE("steps align to the grid and hold the p90 and the max of their samples",
          "[advisor][steps]") {
  MachineSeries m;
  m.machine = "m_1";
  // Ten samples in [120, 180): 1..10 -> p90 (nearest rank) 9, max 10; one in [180, 240).
  for (int i = 1; i <= 10; ++i) m.node.push_back({125 + 5 * i, static_cast<double>(i)});
  m.node.push_back({200, 4});
  auto steps = FormSteps(m, 100, StepRules{});
  REQUIRE(steps.ok());
  REQUIRE(steps->size() == 2);
  CHECK((*steps)[0].time == 180);  // the step's end
  CHECK((*steps)[0].node == 9);
  CHECK((*steps)[0].node_max == 10);
  CHECK((*steps)[0].capacity == 100);
  CHECK((*steps)[1].time == 240);
  CHECK((*steps)[1].node == 4);
}

TEST_CASE("without machine rows the node is the sum of its pods", "[advisor][steps]") {
  MachineSeries m;
  m.machine = "m_2";
  m.pods.push_back(SeriesData{"c_1", {{60, 2}, {70, 4}}, std::nullopt, std::nullopt});
  m.pods.push_back(SeriesData{"c_2", {{65, 1}}, PriorityClass::kBatch, 3.0});
  auto steps = FormSteps(m, 10, StepRules{60, 0.5});
  REQUIRE(steps.ok());
  REQUIRE(steps->size() == 1);
  const Observation& o = (*steps)[0];
  CHECK(o.node == Approx(2 + 1));      // medians (nearest rank): 2 and 1
  CHECK(o.node_max == Approx(4 + 1));  // an upper bound: the maxima's sum
  REQUIRE(o.pods.size() == 2);
  CHECK(o.pods[0].priority == PriorityClass::kProd);  // no class in the trace: Prod
  CHECK(o.pods[0].started == 60);
  CHECK(o.pods[1].request == 3);
}

TEST_CASE("with machine rows, a step that has none is left out", "[advisor][steps]") {
  MachineSeries m;
  m.node = {{10, 5}};
  m.pods.push_back(SeriesData{"c", {{10, 1}, {70, 1}}, std::nullopt, std::nullopt});
  auto steps = FormSteps(m, 10, StepRules{});
  REQUIRE(steps.ok());
  REQUIRE(steps->size() == 1);
  CHECK((*steps)[0].time == 60);
}

TEST_CASE("bad step rules and capacities are refused by value", "[advisor][steps]") {
  MachineSeries m;
  m.machine = "m_3";
  m.node = {{0, 1}};
  CHECK(FormSteps(m, 10, StepRules{0, 0.9}).status().message().find("step") != std::string::npos);
  CHECK_FALSE(FormSteps(m, 10, StepRules{60, 0}).ok());
  auto no_capacity = FormSteps(m, 0, StepRules{});
  REQUIRE_FALSE(no_capacity.ok());
  CHECK(no_capacity.status().message().find("m_3") != std::string::npos);
  auto empty = FormSteps(MachineSeries{}, 10, StepRules{});
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

}  // namespace
}  // namespace qrm::advisor
