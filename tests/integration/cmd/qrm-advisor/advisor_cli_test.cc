// qrm-advisor as an operator runs it: synth writes a trace that replay reads back and scores
// (text and JSON), bad flags and files fail with the exit codes and messages the help names.
#include <fstream>
#include <string>

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
