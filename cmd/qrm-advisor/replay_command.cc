// qrm-advisor replay: flags -> TraceReplayOptions, then the table or JSON report.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "advisor/replay/report.h"
#include "advisor/replay/trace_replay.h"
#include "cmd/qrm-advisor/commands.h"
#include "common/config/config.h"
#include "common/config/po_error_text.h"
#include "common/errno_text.h"

namespace qrm::advisor_cmd {
namespace {

namespace po = boost::program_options;
using advisor::TraceReplayOptions;

struct ReplayFlags {
  std::string format = "alibaba-machine", resource = "cpu", models, output = "text";
  std::string window = "5m", step = "1m", warmup = "24h", file;
  std::vector<std::string> machines;
  size_t max_machines = 0;
  double capacity = 0, step_quantile = 0.9, budget = 0.03;
  bool percent = false;
};

po::options_description Describe(ReplayFlags& f) {
  po::options_description d("qrm-advisor replay flags");
  d.add_options()("help,h", "print this help")(
      "format", po::value(&f.format)->default_value(f.format),
      "alibaba-machine | alibaba-container | simple (docs/trace-formats.md)")(
      "resource", po::value(&f.resource)->default_value(f.resource), "cpu | memory")(
      "machine", po::value(&f.machines), "replay only this machine (repeatable)")(
      "max-machines", po::value(&f.max_machines)->default_value(0),
      "stop after this many machines (0: all)")(
      "capacity", po::value(&f.capacity)->default_value(0),
      "the machines' capacity when the trace has none (0: not set; Alibaba: 100, percent)")(
      "percent", po::bool_switch(&f.percent),
      "a simple trace's usage is percent of the machine (the Alibaba layouts always are)")(
      "models", po::value(&f.models),
      "comma-separated models (default: every model; max:a+b combines)")(
      "window", po::value(&f.window)->default_value(f.window), "the scored window")(
      "step", po::value(&f.step)->default_value(f.step), "the models' sampling step")(
      "step-quantile", po::value(&f.step_quantile)->default_value(f.step_quantile),
      "a step's representative sample: this quantile of its raw samples")(
      "warmup", po::value(&f.warmup)->default_value(f.warmup),
      "windows before this are scored apart")("budget",
                                              po::value(&f.budget)->default_value(f.budget),
                                              "the adaptive model's violation budget")(
      "output,o", po::value(&f.output)->default_value(f.output), "text | json")(
      "file", po::value(&f.file), "the trace (- for stdin)");
  return d;
}

StatusOr<int64_t> Seconds(const std::string& text, const char* key) {
  QRM_ASSIGN_OR_RETURN(const std::chrono::milliseconds ms, config::ParseDuration(text, key));
  if (ms.count() % 1000 != 0) {
    return InvalidArgumentError(fmt::format("{}: invalid value \"{}\" (whole seconds)", key, text));
  }
  return ms.count() / 1000;
}

StatusOr<TraceReplayOptions> ToOptions(const ReplayFlags& f) {
  TraceReplayOptions o;
  QRM_ASSIGN_OR_RETURN(o.format, advisor::ParseTraceFormat(f.format));
  QRM_ASSIGN_OR_RETURN(o.resource, advisor::ParseResource(f.resource));
  o.name = f.file == "-" ? "stdin" : f.file;
  o.machines = {f.machines.begin(), f.machines.end()};
  o.max_machines = f.max_machines;
  if (!(f.capacity >= 0) || !std::isfinite(f.capacity)) {
    return InvalidArgumentError(
        fmt::format("--capacity: invalid value {} (> 0, or 0: not set)", f.capacity));
  }
  if (f.capacity > 0) o.capacity = f.capacity;
  const bool percent = f.percent || o.format != advisor::TraceFormat::kSimple;
  o.replay.model_options = percent ? advisor::ModelOptions::ForPercent(o.resource)
                                   : advisor::ModelOptions::ForResource(o.resource);
  if (!(f.budget > 0 && f.budget < 0.5)) {
    return InvalidArgumentError(
        fmt::format("--budget: invalid value {} (between 0 and 0.5)", f.budget));
  }
  o.replay.model_options.adaptive.violation_budget = f.budget;
  QRM_ASSIGN_OR_RETURN(o.replay.window_s, Seconds(f.window, "window"));
  QRM_ASSIGN_OR_RETURN(o.replay.steps.step_s, Seconds(f.step, "step"));
  QRM_ASSIGN_OR_RETURN(o.replay.warmup_s, Seconds(f.warmup, "warmup"));
  o.replay.steps.quantile = f.step_quantile;
  o.replay.models = advisor::ModelNames();
  if (!f.models.empty()) {
    o.replay.models.clear();
    std::stringstream list(f.models);
    for (std::string m; std::getline(list, m, ',');) o.replay.models.push_back(m);
  }
  if (f.output != "text" && f.output != "json") {
    return InvalidArgumentError(
        fmt::format("output: invalid value \"{}\" (text or json)", f.output));
  }
  return o;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "qrm-advisor replay: %s\n", message.c_str());
  return 1;
}

}  // namespace

int RunReplay(const std::vector<std::string>& args) {
  ReplayFlags flags;
  po::options_description desc = Describe(flags);
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "qrm-advisor replay: %s\n", config::PoErrorText(e).c_str());
    return 2;
  }
  if (vm.count("help") || flags.file.empty()) {
    std::ostringstream os;
    os << "usage: qrm-advisor replay [flags] FILE\n" << desc;
    std::fputs(os.str().c_str(), vm.count("help") ? stdout : stderr);
    return vm.count("help") ? 0 : 2;
  }
  auto options = ToOptions(flags);
  if (!options.ok()) return Fail(options.status().message());
  std::ifstream file;
  if (flags.file != "-") {
    file.open(flags.file, std::ios::binary);
    if (!file) return Fail(fmt::format("cannot open {}: {}", flags.file, ErrnoText(errno)));
  }
  auto result = advisor::ReplayTrace(flags.file == "-" ? std::cin : file, *options);
  if (!result.ok()) return Fail(result.status().message());
  const std::string report = flags.output == "json" ? advisor::ReplayJson(result->replay)
                                                    : advisor::ReplayTable(result->replay);
  std::fputs(report.c_str(), stdout);
  if (flags.output == "text") {
    std::printf("%lu line(s), %lu row(s), %lu skipped (empty usage)\n",
                static_cast<unsigned long>(result->stats.lines),
                static_cast<unsigned long>(result->stats.rows),
                static_cast<unsigned long>(result->stats.skipped_empty));
  }
  return 0;
}

}  // namespace qrm::advisor_cmd
