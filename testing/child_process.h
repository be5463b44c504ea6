// ChildProcess: a program started by a test and killed when the test ends.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace qrm::testing {

class ChildProcess {
 public:
  // Starts `argv` (no shell) with stdout/stderr appended to `log_path` (or
  // inherited when empty).
  explicit ChildProcess(std::vector<std::string> argv, std::string log_path = "");
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Sends `signal` and waits up to `timeout` for the exit; returns the wait status or -1.
  int Kill(int signal, std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// Polls `condition` every 10 ms until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition,
             std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace qrm::testing
