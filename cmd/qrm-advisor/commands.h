// qrm-advisor's subcommands; each takes the arguments after its name and returns the exit
// code (0 ok, 1 failed, 2 bad usage).
#pragma once

#include <string>
#include <vector>

namespace qrm::advisor_cmd {

int RunReplay(const std::vector<std::string>& args);
int RunSynth(const std::vector<std::string>& args);
// The daemon (no command, or flags only).
int RunDaemon(const std::vector<std::string>& args);

}  // namespace qrm::advisor_cmd
