// qrm-advisor synth: the reference synthetic trace (advisor/replay/reference_trace.h), or a
// variation of it, as simple CSV on stdout.
#include <cstdio>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "advisor/replay/reference_trace.h"
#include "advisor/trace/simple_writer.h"
#include "cmd/qrm-advisor/commands.h"
#include "common/config/po_error_text.h"

namespace qrm::advisor_cmd {
namespace {

namespace po = boost::program_options;

struct SynthFlags {
  uint64_t seed = 1;
  int days = 8;
  int64_t step = 10;
  double bursts_per_day = -1;  // not given: the reference trace's
};

po::options_description Describe(SynthFlags& f) {
  po::options_description d("qrm-advisor synth flags");
  d.add_options()("help,h", "print this help")("seed", po::value(&f.seed)->default_value(f.seed),
                                               "the random seed")(
      "days", po::value(&f.days)->default_value(f.days), "length of the trace (1..366)")(
      "step", po::value(&f.step)->default_value(f.step), "seconds between samples (1..3600)")(
      "bursts-per-day", po::value(&f.bursts_per_day),
      "mean number of bursts a day (default: the reference trace's)");
  return d;
}

}  // namespace

int RunSynth(const std::vector<std::string>& args) {
  SynthFlags flags;
  po::options_description desc = Describe(flags);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "qrm-advisor synth: %s\n", config::PoErrorText(e).c_str());
    return 2;
  }
  if (vm.count("help")) {
    std::ostringstream os;
    os << "usage: qrm-advisor synth [flags] > trace.csv\n" << desc;
    std::fputs(os.str().c_str(), stdout);
    return 0;
  }
  if (flags.days < 1 || flags.days > 366) {
    std::fprintf(stderr, "qrm-advisor synth: days: invalid value %d (1..366)\n", flags.days);
    return 1;
  }
  advisor::SyntheticOptions options = advisor::ReferenceSyntheticOptions(flags.seed, flags.days);
  options.step = flags.step;
  if (vm.count("bursts-per-day")) options.bursts.per_day = flags.bursts_per_day;
  auto trace = advisor::GenerateSynthetic(options);
  if (!trace.ok()) {
    std::fprintf(stderr, "qrm-advisor synth: %s\n", trace.status().message().c_str());
    return 1;
  }
  if (Status s = advisor::WriteSimpleCsv(std::cout, trace->series); !s.ok()) {
    std::fprintf(stderr, "qrm-advisor synth: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace qrm::advisor_cmd
