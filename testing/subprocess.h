// Runs a program (never through a shell) and captures its output, for tests
// that check qrm's files with independent tools such as python3.
#pragma once

#include <string>
#include <vector>

namespace qrm::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 if the program could not be run or was killed
  std::string output;  // stdout and stderr, interleaved
};

ProcessResult RunProcess(const std::vector<std::string>& argv);

// Finds an executable on PATH; empty if absent.
std::string FindExecutable(const std::string& name);

}  // namespace qrm::testing
