// qrm-advisor: the node advisor (docs/advisor.md).
//
//   qrm-advisor [flags]               the daemon: sample, predict, size the pools
//   qrm-advisor replay [flags] FILE   score the peak models on a usage trace
//   qrm-advisor synth [flags]         write a synthetic trace (simple CSV) to stdout
#include <cstdio>
#include <string>
#include <vector>

#include "cmd/qrm-advisor/commands.h"

namespace {

constexpr const char* kUsage =
    "usage: qrm-advisor [flags]          run the node advisor (see --help)\n"
    "       qrm-advisor COMMAND [flags]\n"
    "commands:\n"
    "  replay [flags] FILE   replay a usage trace through the peak models and score them\n"
    "  synth [flags]         write a synthetic usage trace (simple CSV) to stdout\n"
    "Run qrm-advisor COMMAND --help for its flags.\n";

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc < 2 ? "" : argv[1];
  if (command.empty() || command[0] == '-') {
    if (command == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    return qrm::advisor_cmd::RunDaemon(std::vector<std::string>(argv + 1, argv + argc));
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "replay") return qrm::advisor_cmd::RunReplay(args);
  if (command == "synth") return qrm::advisor_cmd::RunSynth(args);
  if (command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "qrm-advisor: unknown command \"%s\"\n%s", command.c_str(), kUsage);
  return 2;
}
