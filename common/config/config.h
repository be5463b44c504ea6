// Command-line flags plus one JSON config file per binary, through Boost.Program_options.
//
// Every binary declares its options once (an options_description with flag names such as
// "reconcile-period"). A JSON file named by --config may set the same options: keys are the
// option names with '-' or '_' ("reconcile_period"); strings, numbers and booleans are their
// text; an array sets a multi-value option once per element; an object (or an array given to
// a single-value option) arrives as its compact JSON text, for options such as a role table.
// The command line wins over the file. Everything is validated before the program starts:
// an unknown key, a value of the wrong type or a malformed value is one error line naming
// the key, the value and the expected form.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/program_options.hpp>

#include "common/status.h"

namespace qrm::config {

struct Parsed {
  boost::program_options::variables_map vm;
  // --help or --print-config was given: the binary prints `output` to stdout and exits 0.
  bool exit = false;
  std::string output;
  // --check-config was given: the binary validates its configuration against the machine it
  // reads (--sysfs-root, --procfs-root) as it would at start, reads and writes no state, starts
  // nothing, prints one line and exits 0 (valid) or 2 (the error, naming key and value).
  bool check_only = false;
};

// The line a binary prints when --check-config found nothing wrong.
std::string CheckConfigOk(std::string_view program, std::string_view machine_summary);

// Adds --config FILE, --print-config, --check-config and --help to `desc`, then parses and
// validates (the options' notifiers run, so their targets are set when this returns OK).
StatusOr<Parsed> Parse(int argc, const char* const* argv,
                       boost::program_options::options_description& desc);

// The effective configuration as a JSON object (keys with '_'), the form --config reads.
std::string EffectiveConfigJson(const boost::program_options::variables_map& vm,
                                const boost::program_options::options_description& desc);

// "250ms", "3s", "1m", "1h" (a number and a unit) -> milliseconds; errors name `key`.
StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text, std::string_view key);

// "1048576", "500Ki", "500Mi", "2Gi", "1Ti" (binary units) or "500M"/"2G" (decimal) -> bytes;
// errors name `key`.
StatusOr<uint64_t> ParseBytes(std::string_view text, std::string_view key);

// The --log-level and --log-format every binary takes: kInvalidArgument naming the flag and
// the value unless the level is one spdlog knows (trace..off) and the format text or json.
Status CheckLogFlags(std::string_view level, std::string_view format);

}  // namespace qrm::config
