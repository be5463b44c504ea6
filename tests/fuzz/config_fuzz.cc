// Fuzzes the binaries' JSON config files (common/config/config.h): the input is the content
// of the file given to --config, parsed against a representative options_description (an
// int, strings, a switch, a bool value, a multi-value option, a duration and a size).
//
// Properties beyond "does not crash or throw":
//  * every error is kInvalidArgument;
//  * an accepted file's effective configuration (EffectiveConfigJson, what --print-config
//    prints), written back as a config file, is accepted and prints the same again;
//  * duration and size values, validated the way the binaries do, round-trip through their
//    plain forms ("<n>ms", "<n>").
// libFuzzer runs one input at a time, so one file in a per-process temp dir is enough.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>
#include <unistd.h>

#include "common/config/config.h"

namespace {

namespace po = boost::program_options;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "config_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

void Check(bool ok, const char* what, const std::string& detail = "") {
  if (!ok) Fail(what, detail);
}

// The option kinds the qrm binaries declare, as a fresh description (Parse adds --config,
// --help and --print-config to it, so it cannot be reused).
struct Options {
  int workers = 0;
  std::string period;
  std::string reserved;
  std::string roles;
  std::vector<std::string> namespaces;
  bool verbose = false;
  bool enabled = false;
  po::options_description desc{"fuzz"};

  Options() {
    desc.add_options()("workers", po::value(&workers)->default_value(4), "int")(
        "reconcile-period", po::value(&period)->default_value("3s"), "duration")(
        "reserved-memory", po::value(&reserved)->default_value("500Mi"), "size")(
        "roles", po::value(&roles), "JSON text")(
        "skip-namespaces", po::value(&namespaces)->multitoken()->composing(), "list")(
        "verbose", po::bool_switch(&verbose), "switch")(
        "enabled", po::value(&enabled)->default_value(true), "bool value");
  }
};

// Never destroyed: the exit handler that removes the directory runs after the destructor
// a static string would get, and still needs the name.
const std::string& ConfigPath() {
  static const std::string* const path = [] {
    std::string dir = (std::filesystem::temp_directory_path() / "qrm-config-fuzz-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) Fail("mkdtemp", dir);
    std::atexit(
        [] { std::filesystem::remove_all(std::filesystem::path(ConfigPath()).parent_path()); });
    return new std::string(dir + "/config.json");
  }();
  return *path;
}

void WriteConfig(std::string_view content) {
  std::ofstream out(ConfigPath(), std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  Check(out.good(), "cannot write", ConfigPath());
}

qrm::StatusOr<qrm::config::Parsed> ParseConfig(Options& options) {
  const char* argv[] = {"fuzz", "--config", ConfigPath().c_str()};
  return qrm::config::Parse(3, argv, options.desc);
}

// What a binary does with its duration and size options after Parse.
void ValidateValues(const Options& options) {
  auto period = qrm::config::ParseDuration(options.period, "reconcile_period");
  if (period.ok()) {
    Check(period->count() >= 0, "negative duration", options.period);
    auto again =
        qrm::config::ParseDuration(std::to_string(period->count()) + "ms", "reconcile_period");
    Check(again.ok() && *again == *period, "duration does not round-trip", options.period);
  } else {
    Check(period.status().code() == qrm::StatusCode::kInvalidArgument, "duration error code");
  }
  auto bytes = qrm::config::ParseBytes(options.reserved, "reserved_memory");
  if (bytes.ok()) {
    auto again = qrm::config::ParseBytes(std::to_string(*bytes), "reserved_memory");
    Check(again.ok() && *again == *bytes, "size does not round-trip", options.reserved);
  } else {
    Check(bytes.status().code() == qrm::StatusCode::kInvalidArgument, "size error code");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  WriteConfig(std::string_view(reinterpret_cast<const char*>(data), size));
  Options first;
  qrm::StatusOr<qrm::config::Parsed> parsed = ParseConfig(first);
  if (!parsed.ok()) {
    Check(parsed.status().code() == qrm::StatusCode::kInvalidArgument, "Parse error code",
          parsed.status().ToString());
    return 0;
  }
  Check(!parsed->exit, "a config file asked the binary to exit");
  ValidateValues(first);

  const std::string effective = qrm::config::EffectiveConfigJson(parsed->vm, first.desc);
  WriteConfig(effective);
  Options second;
  qrm::StatusOr<qrm::config::Parsed> reparsed = ParseConfig(second);
  Check(reparsed.ok(), "the effective configuration is not a valid config file",
        effective + " -> " + (reparsed.ok() ? "" : reparsed.status().ToString()));
  Check(qrm::config::EffectiveConfigJson(reparsed->vm, second.desc) == effective,
        "the effective configuration changes when read back", effective);
  return 0;
}
