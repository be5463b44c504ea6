// qrm-advisor as an operator runs it: synth writes a trace that replay reads back and scores
// (text and JSON), bad flags and files fail with the exit codes and messages the help names.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace qrm {
namespace {

using testing::RunProcess;

TEST_CASE("synth writes a trace that replay scores, as a table and as JSON", "[advisor][cli]") {
  testing::TempDir dir;
  const auto synth = RunProcess({QRM_ADVISOR, "synth", "--days", "2", "--seed", "4"});
  REQUIRE(synth.exit_code == 0);
  CHECK(synth.output.rfind("time,machine,pod,usage,priority,request,capacity\n", 0) == 0);
  const std::string trace = dir.File("trace.csv");
  std::ofstream(trace) << synth.output;

  const auto table = RunProcess({QRM_ADVISOR, "replay", "--format", "simple", trace});
  REQUIRE(table.exit_code == 0);
  for (const char* model : {"koordinator", "nsigma-v1", "nsigma-v2", "borg-default",
                            "resource-central", "adaptive", "oracle"}) {
    CHECK(table.output.find(model) != std::string::npos);
  }
  const auto json = RunProcess({QRM_ADVISOR, "replay", "--format", "simple", "-o", "json",
                                "--models", "koordinator,max:borg-default+adaptive", trace});
  REQUIRE(json.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(json.output.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc["models"].Size() == 3);
  CHECK(std::string(doc["models"][1]["model"].GetString()) == "max:borg-default+adaptive");
  // Two days, the first a warm-up: a day of 5-minute windows is scored after it.
  CHECK(doc["models"][0]["after_warmup"]["windows"].GetUint64() == 288);
}

TEST_CASE("replay refuses bad flags and bad traces, naming what is wrong", "[advisor][cli]") {
  testing::TempDir dir;
  const std::string bad = dir.File("bad.csv");
  std::ofstream(bad) << "m_1,0,26,84,,,,,\nm_1,10,abc,84,,,,,\n";
  const auto parse = RunProcess({QRM_ADVISOR, "replay", bad});
  CHECK(parse.exit_code == 1);
  CHECK(parse.output.find("bad.csv:2") != std::string::npos);
  CHECK(parse.output.find("cpu_util_percent") != std::string::npos);

  const auto model = RunProcess({QRM_ADVISOR, "replay", "--models", "prophet", bad});
  CHECK(model.exit_code == 1);
  CHECK(model.output.find("\"prophet\"") != std::string::npos);

  const auto window = RunProcess({QRM_ADVISOR, "replay", "--window", "90s", bad});
  CHECK(window.exit_code == 1);
  CHECK(window.output.find("window") != std::string::npos);

  CHECK(RunProcess({QRM_ADVISOR, "replay", "--no-such-flag", bad}).exit_code == 2);
  CHECK(RunProcess({QRM_ADVISOR, "replay"}).exit_code == 2);
  CHECK(RunProcess({QRM_ADVISOR, "nope"}).exit_code == 2);
  const auto missing = RunProcess({QRM_ADVISOR, "replay", dir.File("none.csv")});
  CHECK(missing.exit_code == 1);
  CHECK(missing.output.find("none.csv") != std::string::npos);
}

}  // namespace
}  // namespace qrm

namespace qrm {
namespace {

// --check-config with one bad flag: exit 2 and a message naming the flag and its value.
void DaemonFlagRefused(std::vector<std::string> flags, const std::string& expected) {
  std::vector<std::string> argv = {QRM_ADVISOR, "--check-config"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  const auto run = testing::RunProcess(argv);
  INFO(run.output);
  CHECK(run.exit_code == 2);
  CHECK(run.output.find(expected) != std::string::npos);
}

TEST_CASE("the daemon refuses flags out of range, naming the flag and the value",
          "[advisor][cli]") {
  DaemonFlagRefused({"--host-timeout", "0s"}, "host-timeout \"0s\": must be above 0");
  DaemonFlagRefused({"--runtime-timeout", "0ms"}, "runtime-timeout \"0ms\": must be above 0");
  DaemonFlagRefused({"--stale-after", "3s", "--inventory-period", "5s"},
                    "stale-after \"3s\": must be at least inventory-period \"5s\"");
  DaemonFlagRefused({"--pool-max-grow", "2147483647"},
                    "pool-max-grow 2147483647: must be from 1 to 8192 CPUs");
  DaemonFlagRefused({"--min-reclaimed-cpus", "-1"}, "min-reclaimed-cpus -1");
  DaemonFlagRefused({"--pool-reactive-factor", "1e9"},
                    "pool-reactive-factor 1000000000: must be from 0 to 100");
  DaemonFlagRefused({"--log-level", "loud"}, "log-level \"loud\"");
  DaemonFlagRefused({"--log-format", "xml"}, "log-format \"xml\"");
  DaemonFlagRefused({"--bucket", "600s", "--bucket-horizon", "3600s"},
                    "bucket: invalid value 600 s (at most the raw_horizon, 300 s)");
  DaemonFlagRefused({"--guard-lease", "3s"},
                    "guard-lease \"3s\": must be from 4s (4 x interval, renewed at half)");
  DaemonFlagRefused({"--guard-stale-after", "0s"}, "guard-stale-after \"0s\"");
  const auto ok = testing::RunProcess({QRM_ADVISOR, "--check-config", "--stale-after", "5s"});
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
}

// The daemon with a guard policy it cannot use: exit 2 before it serves anything.
testing::ProcessResult StartWithPolicy(const testing::TempDir& dir, const std::string& policy) {
  std::ofstream(dir.File("guard.json")) << policy;
  return testing::RunProcess({QRM_ADVISOR, "--guard-policy", dir.File("guard.json"), "--state-dir",
                              "", "--socket", dir.File("advisor.sock"), "--metrics-address", "",
                              "--admin-socket", dir.File("admin.sock"), "--runtime-endpoint",
                              "unix://" + dir.File("containerd.sock")});
}

TEST_CASE("the daemon refuses a guard policy it cannot use, naming the file and the key",
          "[advisor][cli]") {
  testing::TempDir dir;
  const auto bad = StartWithPolicy(dir, R"({"objectiveEnsurances": [], "trottle": {}})");
  INFO(bad.output);
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find(dir.File("guard.json")) != std::string::npos);
  CHECK(bad.output.find("trottle") != std::string::npos);
  const char* home = std::getenv("HOME");
  const bool has_cluster = std::getenv("KUBECONFIG") != nullptr ||
                           std::ifstream(std::string(home ? home : "") + "/.kube/config").good();
  if (has_cluster) return;  // this machine has a cluster configuration: api mode would start
  const auto api = StartWithPolicy(dir, R"({"objectiveEnsurances": [{"name": "cpu", "metricRule":
          {"name": "cpu_total_usage", "value": "90%"}}], "eviction": {"mode": "api"}})");
  INFO(api.output);
  CHECK(api.exit_code == 2);
  CHECK(api.output.find("eviction mode api needs a cluster configuration") != std::string::npos);
}

}  // namespace
}  // namespace qrm
