#include "advisor/guard/guard_policy.h"

#include <string>
#include <string_view>

#include <catch2/catch.hpp>

namespace qrm::advisor::guard {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

// A policy of one cpu_total_usage ensurance at "80%" with `fields` added to it, and `sections`
// added to the top level (each a JSON fragment starting with a comma, or empty).
std::string Policy(std::string_view fields, std::string_view sections = "") {
  const std::string head = R"({"objectiveEnsurances": [{"name": "cpu", )"
                           R"("metricRule": {"name": "cpu_total_usage", "value": "80%"})";
  return head + std::string(fields) + "}]" + std::string(sections) + "}";
}

// A policy whose only ensurance is `entry`.
std::string Entry(std::string_view entry) {
  return R"({"objectiveEnsurances": [)" + std::string(entry) + "]}";
}

// A policy of one cpu_total_usage ensurance with this metricRule.value and restoreMargin.
std::string Levels(std::string_view value, std::string_view margin = "") {
  std::string e = R"({"name": "cpu", "metricRule": {"name": "cpu_total_usage", "value": )" +
                  std::string(value) + "}";
  if (!margin.empty()) e += R"(, "restoreMargin": )" + std::string(margin);
  return Entry(e + "}");
}

// The message of a refusal, which must be kInvalidArgument.
std::string ErrorOf(std::string_view json) {
  const StatusOr<GuardPolicy> policy = ParseGuardPolicy(json);
  INFO(json);
  REQUIRE_FALSE(policy.ok());
  CHECK(policy.status().code() == StatusCode::kInvalidArgument);
  return policy.status().message();
}

GuardPolicy Parsed(std::string_view json) {
  const StatusOr<GuardPolicy> policy = ParseGuardPolicy(json);
  INFO(json);
  INFO(policy.status().message());
  REQUIRE(policy.ok());
  return *policy;
}

TEST_CASE("the guard policy of the header's example parses to exactly what it says",
          "[advisor][guard][policy]") {
  const GuardPolicy p = Parsed(R"({"objectiveEnsurances": [
      {"name": "cpu-usage",
       "metricRule": {"name": "cpu_total_usage", "value": "80%"},
       "actionName": "throttle",
       "strategy": "None",
       "avoidanceThreshold": 2,
       "restoreThreshold": 3,
       "restoreMargin": "5%"}],
    "throttle": {"stepCPURatio": 10, "minCPURatio": 10, "belowRequest": false},
    "eviction": {"mode": "dry-run", "coolDownSeconds": 60, "maxPodsPerRound": 5,
                 "terminationGracePeriodSeconds": 30},
    "candidates": {"sharedCores": false, "skip": ["kube-system/*", "default/db"]}})");
  REQUIRE(p.ensurances.size() == 1);
  const ObjectiveEnsurance& e = p.ensurances[0];
  CHECK(e.name == "cpu-usage");
  CHECK(e.metric == "cpu_total_usage");
  CHECK(e.watermark == Level{80, true});
  CHECK(e.action == GuardAction::kThrottle);
  CHECK(e.strategy == Strategy::kApply);
  CHECK(e.avoidance_threshold == 2);
  CHECK(e.restore_threshold == 3);
  CHECK(e.restore_margin == Level{5, true});
  CHECK(p.throttle.step_ratio == 0.10);
  CHECK(p.throttle.min_cpu_ratio == 0.10);
  CHECK_FALSE(p.throttle.below_request);
  CHECK(p.eviction.mode == EvictMode::kDryRun);
  CHECK(p.eviction.cool_down_s == 60);
  CHECK(p.eviction.max_pods_per_round == 5);
  CHECK(p.eviction.grace_period_s == 30);
  CHECK_FALSE(p.candidates.shared_cores);
  CHECK(p.candidates.skip == std::vector<std::string>{"kube-system/*", "default/db"});
}

TEST_CASE("the guard policy takes every other value of its keys", "[advisor][guard][policy]") {
  const GuardPolicy p = Parsed(R"({"objectiveEnsurances": [
      {"name": "cpu", "metricRule": {"name": "cpu_total_usage", "value": 6.5},
       "actionName": "throttle-evict", "strategy": "Preview", "avoidanceThreshold": 1000,
       "restoreThreshold": 1, "restoreMargin": 0.5},
      {"name": "mem", "metricRule": {"name": "memory_total_usage", "value": 34359738368},
       "actionName": "evict", "restoreMargin": "10%"}],
    "throttle": {"stepCPURatio": 100, "minCPURatio": 0, "belowRequest": true},
    "eviction": {"mode": "cri", "coolDownSeconds": 86400, "maxPodsPerRound": 1000,
                 "terminationGracePeriodSeconds": 0},
    "candidates": {"sharedCores": true, "skip": []}})");
  REQUIRE(p.ensurances.size() == 2);
  ObjectiveEnsurance cpu;
  cpu.name = "cpu";
  cpu.metric = "cpu_total_usage";
  cpu.watermark = {6.5, false};
  cpu.action = GuardAction::kThrottleThenEvict;
  cpu.strategy = Strategy::kPreview;
  cpu.avoidance_threshold = 1000;
  cpu.restore_threshold = 1;
  cpu.restore_margin = {0.5, false};
  CHECK(p.ensurances[0] == cpu);
  ObjectiveEnsurance mem;
  mem.name = "mem";
  mem.metric = "memory_total_usage";
  mem.watermark = {34359738368.0, false};
  mem.action = GuardAction::kEvict;
  mem.restore_margin = {10, true};
  CHECK(p.ensurances[1] == mem);
  CHECK(p.throttle == ThrottleOptions{1.0, 0.0, true});
  CHECK(p.eviction == EvictionOptions{EvictMode::kCri, 86400, 1000, 0});
  CHECK(p.candidates.shared_cores);
  CHECK(p.candidates.skip.empty());
  CHECK(Parsed(Policy("", R"(, "eviction": {"mode": "api"})")).eviction.mode == EvictMode::kApi);
}

TEST_CASE("a minimal guard policy gets every default", "[advisor][guard][policy]") {
  const GuardPolicy p =
      Parsed(R"({"objectiveEnsurances": [{"name": "c", "metricRule": {"name": "cpu_total_usage",
                                                                       "value": "90%"}}]})");
  REQUIRE(p.ensurances.size() == 1);
  const ObjectiveEnsurance& e = p.ensurances[0];
  CHECK(e.name == "c");
  CHECK(e.metric == "cpu_total_usage");
  CHECK(e.watermark == Level{90, true});
  CHECK(e.action == GuardAction::kThrottle);
  CHECK(e.strategy == Strategy::kApply);
  CHECK(e.avoidance_threshold == 1);
  CHECK(e.restore_threshold == 1);
  CHECK(e.restore_margin == Level{0, false});
  CHECK(p.throttle.step_ratio == 0.10);
  CHECK(p.throttle.min_cpu_ratio == 0.10);
  CHECK_FALSE(p.throttle.below_request);
  CHECK(p.eviction.mode == EvictMode::kDryRun);
  CHECK(p.eviction.cool_down_s == 60);
  CHECK(p.eviction.max_pods_per_round == 5);
  CHECK(p.eviction.grace_period_s == 30);
  CHECK_FALSE(p.candidates.shared_cores);
  CHECK(p.candidates.skip.empty());
  // Empty sections keep their defaults too.
  const GuardPolicy empty_sections =
      Parsed(Policy("", R"(, "throttle": {}, "eviction": {}, "candidates": {})"));
  CHECK(empty_sections.throttle == ThrottleOptions{});
  CHECK(empty_sections.eviction == EvictionOptions{});
  CHECK(empty_sections.candidates == CandidateOptions{});
}

TEST_CASE("memory_total_usage defaults to evict and cannot be throttled",
          "[advisor][guard][policy]") {
  const std::string mem = R"({"name": "mem", "metricRule": {"name": "memory_total_usage",
                                                             "value": "85%"})";
  CHECK(Parsed(Entry(mem + "}")).ensurances.at(0).action == GuardAction::kEvict);
  CHECK(Parsed(Entry(mem + R"(, "actionName": "evict"})")).ensurances.at(0).action ==
        GuardAction::kEvict);
  CHECK(ErrorOf(Entry(mem + R"(, "actionName": "throttle"})")) ==
        "objectiveEnsurances[0].actionName: invalid value \"throttle\" (memory_total_usage cannot "
        "be throttled: use \"evict\")");
  CHECK(ErrorOf(Entry(mem + R"(, "actionName": "throttle-evict"})")) ==
        "objectiveEnsurances[0].actionName: invalid value \"throttle-evict\" (memory_total_usage "
        "cannot be throttled: use \"evict\")");
  CHECK(Parsed(Policy(R"(, "actionName": "evict")")).ensurances.at(0).action ==
        GuardAction::kEvict);
}

TEST_CASE("guard levels are absolute numbers or percents of the capacity",
          "[advisor][guard][policy]") {
  auto watermark = [](std::string_view value) {
    return Parsed(Levels(value)).ensurances.at(0).watermark;
  };
  CHECK(watermark(R"("80%")") == Level{80, true});
  CHECK(watermark(R"("100%")") == Level{100, true});
  CHECK(watermark(R"("0.5%")") == Level{0.5, true});
  CHECK(watermark(R"("1e1%")") == Level{10, true});
  CHECK(watermark("6.5") == Level{6.5, false});
  CHECK(watermark("12") == Level{12, false});
  CHECK(watermark("0.001") == Level{0.001, false});
  CHECK(watermark("1073741824") == Level{1073741824.0, false});
  CHECK(watermark("80.1") == Level{80.1, false});
  CHECK(Level{80, true}.Resolve(16) == 12.8);
  CHECK(Level{6.5, false}.Resolve(16) == 6.5);
}

TEST_CASE("a guard restore margin is below a watermark of its kind", "[advisor][guard][policy]") {
  auto margin = [](std::string_view value, std::string_view m) {
    return Parsed(Levels(value, m)).ensurances.at(0).restore_margin;
  };
  CHECK(margin(R"("80%")", R"("5%")") == Level{5, true});
  CHECK(margin(R"("80%")", R"("0%")") == Level{0, true});
  CHECK(margin(R"("80%")", R"("79.9%")") == Level{79.9, true});
  CHECK(margin("6.5", "6") == Level{6, false});
  CHECK(margin("6.5", "0") == Level{0, false});
  // Different kinds compare only against the node's capacity: accepted here.
  CHECK(margin("6.5", R"("50%")") == Level{50, true});
  CHECK(margin(R"("80%")", "200") == Level{200, false});
  CHECK(ErrorOf(Levels(R"("80%")", R"("80%")")) ==
        "objectiveEnsurances[0].restoreMargin: invalid value \"80%\" (below the watermark "
        "\"80%\")");
  CHECK(ErrorOf(Levels(R"("50%")", R"("60%")")) ==
        "objectiveEnsurances[0].restoreMargin: invalid value \"60%\" (below the watermark "
        "\"50%\")");
  CHECK(ErrorOf(Levels("6.5", "6.5")) ==
        "objectiveEnsurances[0].restoreMargin: invalid value 6.5 (below the watermark 6.5)");
  CHECK(ErrorOf(Levels("6.5", "7")) ==
        "objectiveEnsurances[0].restoreMargin: invalid value 7 (below the watermark 6.5)");
  CHECK(ErrorOf(Levels("6.5", "-1")) ==
        "objectiveEnsurances[0].restoreMargin: invalid value -1 (a number >= 0)");
  CHECK(ErrorOf(Levels("6.5", R"("100%")")) ==
        "objectiveEnsurances[0].restoreMargin: invalid value \"100%\" (a percent from 0% to "
        "below 100%)");
  CHECK(ErrorOf(Levels("6.5", R"("-1%")")) ==
        "objectiveEnsurances[0].restoreMargin: invalid value \"-1%\" (a percent from 0% to below "
        "100%)");
  CHECK(ErrorOf(Levels("6.5", R"("5 %")")) ==
        "objectiveEnsurances[0].restoreMargin: invalid value \"5 %\" (a number, or a number "
        "followed by \"%\")");
  CHECK(ErrorOf(Levels("6.5", "true")) ==
        "objectiveEnsurances[0].restoreMargin: invalid value true (a number, or a number "
        "followed by \"%\")");
}

TEST_CASE("a guard watermark refuses malformed percents and values out of range",
          "[advisor][guard][policy]") {
  const std::string path = "objectiveEnsurances[0].metricRule.value: invalid value ";
  const std::string format = " (a number, or a number followed by \"%\")";
  for (const std::string_view bad :
       {R"("80 %")", R"("%")", R"("abc%")", R"("nan%")", R"("inf%")", R"("80")", R"("")",
        R"(" 80%")", R"("+80%")", R"("0x10%")", R"("80%%")", R"("1e400%")", "null", "[80]",
        R"({"value":80})", R"("80\u0000%")"}) {
    CHECK(ErrorOf(Levels(bad)) == path + std::string(bad) + format);
  }
  const std::string range = " (a percent above 0% and at most 100%)";
  for (const std::string_view bad : {R"("101%")", R"("-5%")", R"("0%")", R"("100.001%")"}) {
    CHECK(ErrorOf(Levels(bad)) == path + std::string(bad) + range);
  }
  CHECK(ErrorOf(Levels("0")) == path + "0 (a number above 0)");
  CHECK(ErrorOf(Levels("-1.5")) == path + "-1.5 (a number above 0)");
  // A zero with a large exponent (RapidJSON 1.1's full-precision parsing has UB on it).
  CHECK(ErrorOf(Levels("0e99")) == path + "0.0 (a number above 0)");
}

TEST_CASE("a guard policy that is not a JSON object is refused", "[advisor][guard][policy]") {
  CHECK_THAT(ErrorOf(""), StartsWith("guard policy: not a JSON object (offset 0: "));
  CHECK_THAT(ErrorOf(std::string_view()), StartsWith("guard policy: not a JSON object (offset 0"));
  CHECK_THAT(ErrorOf("{"), StartsWith("guard policy: not a JSON object (offset 1: "));
  CHECK_THAT(ErrorOf(Policy("") + " x"), StartsWith("guard policy: not a JSON object (offset "));
  CHECK_THAT(ErrorOf(Policy("") + "{}"), Contains("not a JSON object"));
  // Not valid UTF-8: refused before any message could quote it.
  CHECK_THAT(ErrorOf(Policy("", ", \"\xff\": 1")), StartsWith("guard policy: not a JSON object"));
  CHECK(ErrorOf("[1, 2]") == "guard policy: not a JSON object (found [1,2])");
  CHECK(ErrorOf("\"policy\"") == "guard policy: not a JSON object (found \"policy\")");
  CHECK(ErrorOf("null") == "guard policy: not a JSON object (found null)");
}

TEST_CASE("a guard policy needs at least one ensurance with a name and a metricRule",
          "[advisor][guard][policy]") {
  CHECK(ErrorOf("{}") == "objectiveEnsurances: missing (an array of at least one ensurance)");
  CHECK(ErrorOf(R"({"objectiveEnsurances": []})") ==
        "objectiveEnsurances: invalid value [] (an array of at least one ensurance)");
  CHECK(ErrorOf(R"({"objectiveEnsurances": {"name": "cpu"}})") ==
        "objectiveEnsurances: invalid value {\"name\":\"cpu\"} (an array of at least one "
        "ensurance)");
  CHECK(ErrorOf(Entry("5")) == "objectiveEnsurances[0]: invalid value 5 (an object)");
  CHECK(ErrorOf(Entry(R"({"metricRule": {"name": "cpu_total_usage", "value": 1}})")) ==
        "objectiveEnsurances[0].name: missing (a non-empty string)");
  CHECK(ErrorOf(Entry(R"({"name": "", "metricRule": {"name": "cpu_total_usage", "value": 1}})")) ==
        "objectiveEnsurances[0].name: invalid value \"\" (a non-empty string)");
  CHECK(ErrorOf(Entry(R"({"name": 7, "metricRule": {"name": "cpu_total_usage", "value": 1}})")) ==
        "objectiveEnsurances[0].name: invalid value 7 (a non-empty string)");
  CHECK(ErrorOf(Entry(R"({"name": "cpu"})")) ==
        "objectiveEnsurances[0].metricRule: missing (an object with \"name\" and \"value\")");
  CHECK(ErrorOf(Entry(R"({"name": "cpu", "metricRule": "cpu_total_usage"})")) ==
        "objectiveEnsurances[0].metricRule: invalid value \"cpu_total_usage\" (an object with "
        "\"name\" and \"value\")");
  CHECK(ErrorOf(Entry(R"({"name": "cpu", "metricRule": {"value": 1}})")) ==
        "objectiveEnsurances[0].metricRule.name: missing (a registered metric: cpu_total_usage, "
        "memory_total_usage)");
  CHECK(ErrorOf(Entry(R"({"name": "cpu", "metricRule": {"name": "cpu_total_usage"}})")) ==
        "objectiveEnsurances[0].metricRule.value: missing (a number, or a number followed by "
        "\"%\")");
}

TEST_CASE("a guard ensurance names a registered metric", "[advisor][guard][policy]") {
  const std::string expected = " (a registered metric: cpu_total_usage, memory_total_usage)";
  CHECK(ErrorOf(Entry(R"({"name": "d", "metricRule": {"name": "disk_usage", "value": 1}})")) ==
        "objectiveEnsurances[0].metricRule.name: invalid value \"disk_usage\"" + expected);
  CHECK(ErrorOf(Entry(R"({"name": "d", "metricRule": {"name": "CPU_TOTAL_USAGE", "value": 1}})")) ==
        "objectiveEnsurances[0].metricRule.name: invalid value \"CPU_TOTAL_USAGE\"" + expected);
  CHECK(ErrorOf(Entry(R"({"name": "d", "metricRule": {"name": 1, "value": 1}})")) ==
        "objectiveEnsurances[0].metricRule.name: invalid value 1" + expected);
  CHECK(ErrorOf(Entry(
            R"({"name": "d", "metricRule": {"name": "cpu_total_usage\u0000x", "value": 1}})")) ==
        "objectiveEnsurances[0].metricRule.name: invalid value \"cpu_total_usage\\u0000x\"" +
            expected);
}

TEST_CASE("guard ensurance names are unique", "[advisor][guard][policy]") {
  const std::string cpu =
      R"({"name": "cpu", "metricRule": {"name": "cpu_total_usage", "value": 6}})";
  const std::string mem =
      R"({"name": "mem", "metricRule": {"name": "memory_total_usage", "value": "90%"}})";
  CHECK(Parsed(Entry(cpu + "," + mem)).ensurances.size() == 2);
  CHECK(ErrorOf(Entry(cpu + "," + mem + "," + cpu)) ==
        "objectiveEnsurances[2].name: invalid value \"cpu\" (already the name of "
        "objectiveEnsurances[0])");
  CHECK(ErrorOf(Entry(mem + "," + mem)) ==
        "objectiveEnsurances[1].name: invalid value \"mem\" (already the name of "
        "objectiveEnsurances[0])");
}

TEST_CASE("guard policy keys unknown at any level are refused by name",
          "[advisor][guard][policy]") {
  CHECK(ErrorOf(Policy("", R"(, "throtle": {})")) ==
        "guard policy: unknown key \"throtle\" (known: objectiveEnsurances, throttle, eviction, "
        "candidates)");
  CHECK(ErrorOf(Policy(R"(, "action": "evict")")) ==
        "objectiveEnsurances[0]: unknown key \"action\" (known: name, metricRule, actionName, "
        "strategy, avoidanceThreshold, restoreThreshold, restoreMargin)");
  CHECK(ErrorOf(Entry(R"({"name": "c", "metricRule": {"name": "cpu_total_usage", "value": 1,
                                                      "unit": "cores"}})")) ==
        "objectiveEnsurances[0].metricRule: unknown key \"unit\" (known: name, value)");
  CHECK(ErrorOf(Policy("", R"(, "throttle": {"StepCPURatio": 10})")) ==
        "throttle: unknown key \"StepCPURatio\" (known: stepCPURatio, minCPURatio, "
        "belowRequest)");
  CHECK(ErrorOf(Policy("", R"(, "eviction": {"cooldown": 10})")) ==
        "eviction: unknown key \"cooldown\" (known: mode, coolDownSeconds, maxPodsPerRound, "
        "terminationGracePeriodSeconds)");
  CHECK(ErrorOf(Policy("", R"(, "candidates": {"skipped": []})")) ==
        "candidates: unknown key \"skipped\" (known: sharedCores, skip)");
  // Written escaped, so the message stays one printable line.
  CHECK_THAT(ErrorOf(Policy("", ", \"a\\u0000\\nb\\u00e9\x7f\": 1")),
             StartsWith("guard policy: unknown key \"a\\u0000\\nb\\u00E9\\u007F\" (known: "));
  // A key written twice: which one would be in force?
  CHECK(ErrorOf(Policy("", R"(, "throttle": {"stepCPURatio": 10, "stepCPURatio": 20})")) ==
        "throttle: key \"stepCPURatio\" written twice");
  CHECK(ErrorOf(Policy(R"(, "strategy": "None", "strategy": "Preview")")) ==
        "objectiveEnsurances[0]: key \"strategy\" written twice");
}

TEST_CASE("guard policy values of the wrong type are refused", "[advisor][guard][policy]") {
  CHECK(ErrorOf(Policy("", R"(, "throttle": [])")) == "throttle: invalid value [] (an object)");
  CHECK(ErrorOf(Policy("", R"(, "eviction": "api")")) ==
        "eviction: invalid value \"api\" (an object)");
  CHECK(ErrorOf(Policy("", R"(, "candidates": null)")) ==
        "candidates: invalid value null (an object)");
  CHECK(ErrorOf(Policy("", R"(, "throttle": {"belowRequest": "yes"})")) ==
        "throttle.belowRequest: invalid value \"yes\" (true or false)");
  CHECK(ErrorOf(Policy("", R"(, "throttle": {"stepCPURatio": "10%"})")) ==
        "throttle.stepCPURatio: invalid value \"10%\" (a number above 0 and at most 100)");
  CHECK(ErrorOf(Policy("", R"(, "candidates": {"sharedCores": 1})")) ==
        "candidates.sharedCores: invalid value 1 (true or false)");
  CHECK(ErrorOf(Policy("", R"(, "candidates": {"skip": "default/db"})")) ==
        "candidates.skip: invalid value \"default/db\" (an array of strings)");
  CHECK(ErrorOf(Policy("", R"(, "candidates": {"skip": [["default/db"]]})")) ==
        "candidates.skip[0]: invalid value [\"default/db\"] (\"namespace/name\" or "
        "\"namespace/*\")");
  CHECK(ErrorOf(Policy(R"(, "avoidanceThreshold": "2")")) ==
        "objectiveEnsurances[0].avoidanceThreshold: invalid value \"2\" (a whole number from 1 "
        "to 1000)");
  CHECK(ErrorOf(Policy(R"(, "restoreThreshold": 2.5)")) ==
        "objectiveEnsurances[0].restoreThreshold: invalid value 2.5 (a whole number from 1 to "
        "1000)");
  CHECK(ErrorOf(Policy("", R"(, "eviction": {"coolDownSeconds": 6e1})")) ==
        "eviction.coolDownSeconds: invalid value 60.0 (a whole number from 0 to 86400)");
  CHECK(ErrorOf(Policy(R"(, "actionName": true)")) ==
        "objectiveEnsurances[0].actionName: invalid value true (\"throttle\", \"evict\" or "
        "\"throttle-evict\")");
  CHECK(ErrorOf(Policy(R"(, "strategy": 0)")) ==
        "objectiveEnsurances[0].strategy: invalid value 0 (\"None\" or \"Preview\")");
  CHECK(ErrorOf(Policy("", R"(, "eviction": {"mode": null})")) ==
        "eviction.mode: invalid value null (\"dry-run\", \"api\" or \"cri\")");
}

TEST_CASE("guard policy names of actions strategies and modes are exact",
          "[advisor][guard][policy]") {
  CHECK(ErrorOf(Policy(R"(, "actionName": "Throttle")")) ==
        "objectiveEnsurances[0].actionName: invalid value \"Throttle\" (\"throttle\", \"evict\" or "
        "\"throttle-evict\")");
  CHECK(ErrorOf(Policy(R"(, "actionName": "throttle_evict")")) ==
        "objectiveEnsurances[0].actionName: invalid value \"throttle_evict\" (\"throttle\", "
        "\"evict\" or \"throttle-evict\")");
  CHECK(ErrorOf(Policy(R"(, "strategy": "none")")) ==
        "objectiveEnsurances[0].strategy: invalid value \"none\" (\"None\" or \"Preview\")");
  CHECK(ErrorOf(Policy("", R"(, "eviction": {"mode": "dryrun"})")) ==
        "eviction.mode: invalid value \"dryrun\" (\"dry-run\", \"api\" or \"cri\")");
}

TEST_CASE("guard policy numbers out of their ranges are refused", "[advisor][guard][policy]") {
  const std::string e = "objectiveEnsurances[0].";
  CHECK(ErrorOf(Policy(R"(, "avoidanceThreshold": 0)")) ==
        e + "avoidanceThreshold: invalid value 0 (a whole number from 1 to 1000)");
  CHECK(ErrorOf(Policy(R"(, "avoidanceThreshold": 1001)")) ==
        e + "avoidanceThreshold: invalid value 1001 (a whole number from 1 to 1000)");
  CHECK(ErrorOf(Policy(R"(, "restoreThreshold": 0)")) ==
        e + "restoreThreshold: invalid value 0 (a whole number from 1 to 1000)");
  CHECK(ErrorOf(Policy(R"(, "restoreThreshold": -3)")) ==
        e + "restoreThreshold: invalid value -3 (a whole number from 1 to 1000)");
  CHECK(ErrorOf(Policy(R"(, "restoreThreshold": 18446744073709551615)")) ==
        e + "restoreThreshold: invalid value 18446744073709551615 (a whole number from 1 to 1000)");
  auto section = [](std::string_view s) { return ErrorOf(Policy("", s)); };
  CHECK(section(R"(, "throttle": {"stepCPURatio": 0})") ==
        "throttle.stepCPURatio: invalid value 0 (a number above 0 and at most 100)");
  CHECK(section(R"(, "throttle": {"stepCPURatio": 100.5})") ==
        "throttle.stepCPURatio: invalid value 100.5 (a number above 0 and at most 100)");
  // So small that its share of the limit rounds to 0: a step that would never move a quota.
  CHECK(section(R"(, "throttle": {"stepCPURatio": 1e-323})") ==
        "throttle.stepCPURatio: invalid value 1e-323 (a number above 0 and at most 100)");
  CHECK(section(R"(, "throttle": {"minCPURatio": -1})") ==
        "throttle.minCPURatio: invalid value -1 (a number from 0 to 100)");
  CHECK(section(R"(, "throttle": {"minCPURatio": 101})") ==
        "throttle.minCPURatio: invalid value 101 (a number from 0 to 100)");
  CHECK(section(R"(, "eviction": {"coolDownSeconds": -1})") ==
        "eviction.coolDownSeconds: invalid value -1 (a whole number from 0 to 86400)");
  CHECK(section(R"(, "eviction": {"coolDownSeconds": 86401})") ==
        "eviction.coolDownSeconds: invalid value 86401 (a whole number from 0 to 86400)");
  CHECK(section(R"(, "eviction": {"maxPodsPerRound": 0})") ==
        "eviction.maxPodsPerRound: invalid value 0 (a whole number from 1 to 1000)");
  CHECK(section(R"(, "eviction": {"maxPodsPerRound": 1001})") ==
        "eviction.maxPodsPerRound: invalid value 1001 (a whole number from 1 to 1000)");
  CHECK(section(R"(, "eviction": {"terminationGracePeriodSeconds": 3601})") ==
        "eviction.terminationGracePeriodSeconds: invalid value 3601 (a whole number from 0 to "
        "3600)");
  CHECK(section(R"(, "eviction": {"terminationGracePeriodSeconds": -1})") ==
        "eviction.terminationGracePeriodSeconds: invalid value -1 (a whole number from 0 to "
        "3600)");
  // The bounds themselves are accepted.
  const GuardPolicy p =
      Parsed(Policy("", R"(, "throttle": {"stepCPURatio": 0.5, "minCPURatio": 100},
      "eviction": {"coolDownSeconds": 0, "maxPodsPerRound": 1,
                   "terminationGracePeriodSeconds": 3600})"));
  CHECK(p.throttle.step_ratio == 0.005);
  CHECK(p.throttle.min_cpu_ratio == 1.0);
  CHECK(p.eviction == EvictionOptions{EvictMode::kDryRun, 0, 1, 3600});
}

TEST_CASE("guard skip entries are namespace/name or namespace/* and bad ones are named",
          "[advisor][guard][policy]") {
  const GuardPolicy p = Parsed(
      Policy("", R"(, "candidates": {"skip": ["kube-system/*", "default/db", "a.b-c/x.y-z"]})"));
  CHECK(p.candidates.skip ==
        std::vector<std::string>{"kube-system/*", "default/db", "a.b-c/x.y-z"});
  for (const std::string_view bad :
       {R"("kube-system")", R"("/x")", R"("ns/")", R"("/")", R"("")", R"("a/b/c")", R"("ns/ web")",
        R"("ns/web ")", R"("a b/c")", R"("ns/we\tb")", R"("ns/web-*")", R"("*/db")", R"("*/*")",
        R"("ns/**")", R"("ns/a\u0000")", "5", "null"}) {
    CHECK(ErrorOf(Policy("", R"(, "candidates": {"skip": ["default/db", )" + std::string(bad) +
                                 "]}")) == "candidates.skip[1]: invalid value " + std::string(bad) +
                                               " (\"namespace/name\" or \"namespace/*\")");
  }
}

TEST_CASE("guard candidates are skipped by exact and wildcard entries only",
          "[advisor][guard][policy]") {
  CandidateOptions c;
  c.skip = {"kube-system/*", "default/db"};
  CHECK(c.Skipped("kube-system", "coredns"));
  CHECK(c.Skipped("kube-system", "*"));
  CHECK(c.Skipped("default", "db"));
  CHECK_FALSE(c.Skipped("default", "db2"));
  CHECK_FALSE(c.Skipped("default", "d"));
  CHECK_FALSE(c.Skipped("default", "web"));
  CHECK_FALSE(c.Skipped("default", ""));
  CHECK_FALSE(c.Skipped("kube", "coredns"));
  CHECK_FALSE(c.Skipped("kube-system2", "coredns"));
  CHECK_FALSE(c.Skipped("", "db"));
  CHECK_FALSE(c.Skipped("default/db", ""));
  CHECK_FALSE(c.Skipped("prod", "db"));
  CHECK_FALSE(CandidateOptions{}.Skipped("default", "db"));
  // Parsed entries behave the same.
  const GuardPolicy p = Parsed(Policy("", R"(, "candidates": {"skip": ["jobs/*", "web/api"]})"));
  CHECK(p.candidates.Skipped("jobs", "etl-1"));
  CHECK(p.candidates.Skipped("web", "api"));
  CHECK_FALSE(p.candidates.Skipped("web", "api-2"));
  CHECK_FALSE(p.candidates.Skipped("jobs2", "etl-1"));
}

TEST_CASE("a guard policy message quotes a large value cut short", "[advisor][guard][policy]") {
  const std::string big(5000, 'x');
  const std::string message =
      ErrorOf(Entry(R"({"name": "d", "metricRule": {"name": ")" + big + R"(", "value": 1}})"));
  CHECK_THAT(message, StartsWith("objectiveEnsurances[0].metricRule.name: invalid value \"xxx"));
  CHECK_THAT(message, Contains("x... (a registered metric: "));
  CHECK(message.size() < 250);
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  const std::string deep_message = ErrorOf(Policy("", R"(, "throttle": )" + deep));
  CHECK_THAT(deep_message, StartsWith("throttle: invalid value [[[["));
  CHECK_THAT(deep_message, Contains("[... (an object)"));
}

}  // namespace
}  // namespace qrm::advisor::guard
