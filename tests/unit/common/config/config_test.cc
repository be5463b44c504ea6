// Flags + JSON config: precedence, every value form, and one-line errors naming the key.
#include "common/config/config.h"

#include <catch2/catch.hpp>

#include "common/config/po_error_text.h"
#include "testing/temp_dir.h"

namespace qrm::config {
namespace {
namespace po = boost::program_options;

struct Options {
  std::string period;
  int workers = 0;
  std::string roles;
  std::vector<std::string> namespaces;
  bool verbose = false;
  po::options_description desc{"test"};

  Options() {
    desc.add_options()("reconcile-period", po::value(&period)->default_value("3s"), "period")(
        "workers", po::value(&workers)->default_value(4), "workers")("roles", po::value(&roles),
                                                                     "role table JSON")(
        "skip-namespaces", po::value(&namespaces)->multitoken()->composing(), "namespaces")(
        "verbose", po::bool_switch(&verbose), "verbose");
  }
};

StatusOr<Parsed> Run(Options& o, std::vector<std::string> args) {
  std::vector<const char*> argv{"prog"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return Parse(static_cast<int>(argv.size()), argv.data(), o.desc);
}

TEST_CASE("a JSON file sets options with '_' keys and flags override it") {
  testing::TempDir dir;
  const std::string file = dir.path() + "/c.json";
  testing::WriteFile(file,
                     R"({"reconcile_period": "10s", "workers": 8, "verbose": true,
                         "roles": {"ETL": {"qos_level": "reclaimed_cores"}},
                         "skip_namespaces": ["kube-system", "qrm"]})");
  Options o;
  auto p = Run(o, {"--config", file, "--workers", "2"});
  REQUIRE(p.ok());
  CHECK_FALSE(p->exit);
  CHECK(o.period == "10s");
  CHECK(o.workers == 2);
  CHECK(o.verbose);
  CHECK(o.roles == R"({"ETL":{"qos_level":"reclaimed_cores"}})");
  CHECK(o.namespaces == std::vector<std::string>{"kube-system", "qrm"});

  auto printed = EffectiveConfigJson(p->vm, o.desc);
  CHECK_THAT(printed, Catch::Contains(R"("reconcile_period":"10s")") &&
                          Catch::Contains(R"("workers":2)") &&
                          Catch::Contains(R"("skip_namespaces":["kube-system","qrm"])"));
}

TEST_CASE("print-config and help ask the binary to print and exit") {
  Options o;
  auto p = Run(o, {"--workers", "3", "--print-config"});
  REQUIRE(p.ok());
  CHECK(p->exit);
  CHECK_THAT(p->output, Catch::Contains(R"("workers":3)"));
  Options h;
  auto help = Run(h, {"--help"});
  REQUIRE(help.ok());
  CHECK(help->exit);
  CHECK_THAT(help->output, Catch::Contains("--reconcile-period"));
}

TEST_CASE("config errors are one line naming the key and the value") {
  testing::TempDir dir;
  auto with = [&](const std::string& json) {
    const std::string file = dir.path() + "/bad.json";
    testing::WriteFile(file, json);
    Options o;
    return Run(o, {"--config", file}).status();
  };
  Status unknown = with(R"({"reconcile_perod": "3s"})");
  CHECK(unknown.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(unknown.message(), Catch::Contains("reconcile_perod"));
  Status type = with(R"({"workers": "many"})");
  CHECK(type.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(type.message(), Catch::Contains("many") && Catch::Contains("workers"));
  Status sw = with(R"({"verbose": "yes"})");
  CHECK_THAT(sw.message(), Catch::Contains("verbose") && Catch::Contains("yes"));
  Status json = with(R"({"workers": )");
  CHECK_THAT(json.message(), Catch::Contains("invalid JSON"));
  Status nested = with(R"({"skip_namespaces": [{"a": 1}]})");
  CHECK_THAT(nested.message(), Catch::Contains("skip_namespaces"));
  for (const Status& s : {unknown, type, sw, json, nested}) {
    CHECK(s.message().find('\n') == std::string::npos);
  }
  Options o;
  CHECK(Run(o, {"--config", dir.path() + "/missing.json"}).status().code() ==
        StatusCode::kInvalidArgument);
  Options f;
  CHECK_THAT(Run(f, {"--no-such-flag"}).status().message(), Catch::Contains("no-such-flag"));
}

// Found by tests/fuzz/config_fuzz: the empty key made program_options throw
// ambiguous_option out of Parse, ending the binary instead of reporting the key.
TEST_CASE("an empty config key is an unknown key, not an exception") {
  testing::TempDir dir;
  const std::string file = dir.path() + "/empty_key.json";
  testing::WriteFile(file, R"({"": "x"})");
  Options o;
  StatusOr<Parsed> p = Run(o, {"--config", file});
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(p.status().message(), Catch::Contains("unknown key \"\""));
}

// Found by tests/fuzz/config_fuzz: Boost.Program_options formats its error messages by
// replacing placeholders until none is left, so a bad value containing "%value%" made the
// first what() loop forever and hung the binary at start.
TEST_CASE("a bad value that looks like a message placeholder is reported, not a hang") {
  testing::TempDir dir;
  const std::string file = dir.path() + "/placeholder.json";
  testing::WriteFile(file, R"({"workers": "x%value%') for opti"})");
  Options from_file;
  StatusOr<Parsed> p = Run(from_file, {"--config", file});
  REQUIRE_FALSE(p.ok());
  CHECK_THAT(p.status().message(),
             Catch::Contains("workers") && Catch::Contains("x%value%') for opti"));
  Options from_flag;
  StatusOr<Parsed> f = Run(from_flag, {"--workers=%original_token%%value%"});
  REQUIRE_FALSE(f.ok());
  CHECK_THAT(f.status().message(), Catch::Contains("%original_token%%value%"));
}

TEST_CASE("PoErrorText reads like Boost's own message") {
  Options o;
  try {
    const char* argv[] = {"prog", "--workers", "many"};
    po::variables_map vm;
    po::store(po::parse_command_line(3, argv, o.desc), vm);
    FAIL("--workers many was accepted");
  } catch (const po::error& e) {
    CHECK(PoErrorText(e) == e.what());
    CHECK_THAT(PoErrorText(e), Catch::Contains("--workers") && Catch::Contains("many"));
  }
}

TEST_CASE("durations and sizes") {
  CHECK(*ParseDuration("250ms", "k") == std::chrono::milliseconds(250));
  CHECK(*ParseDuration("3s", "k") == std::chrono::milliseconds(3000));
  CHECK(*ParseDuration("1.5s", "k") == std::chrono::milliseconds(1500));
  CHECK(*ParseDuration("1m", "k") == std::chrono::milliseconds(60000));
  for (const char* bad : {"fast", "3", "-1s", "3 s", "", "1e20h"}) {
    auto d = ParseDuration(bad, "reconcile_period");
    REQUIRE_FALSE(d.ok());
    CHECK_THAT(d.status().message(), Catch::Contains("reconcile_period"));
  }
  CHECK(*ParseBytes("500Mi", "k") == 524288000ULL);
  CHECK(*ParseBytes("1048576", "k") == 1048576ULL);
  CHECK(*ParseBytes("2G", "k") == 2000000000ULL);
  for (const char* bad : {"lots", "-1", "5Xi", "99999999999999999999", "20000000Ti"}) {
    auto b = ParseBytes(bad, "reserved_memory");
    REQUIRE_FALSE(b.ok());
    CHECK_THAT(b.status().message(), Catch::Contains("reserved_memory"));
  }
}

}  // namespace
}  // namespace qrm::config
