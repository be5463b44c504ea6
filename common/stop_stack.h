// StopStack: stops what a process started, newest first, exactly once.
//
// A daemon's wiring pushes each part's stop as the part starts; however the start-up ends
// (a failed step returning early, or the signal that ends a normal run), destroying the stack
// stops everything already started in reverse order, so no error path has to repeat the
// shutdown sequence by hand. A part that must stop before the parts started after it (the
// /metrics server, whose collectors read later parts) pushes its stop again at that point:
// stops must be idempotent.
//
// Declare the stack after the parts it stops, so it is destroyed (and stops them) first.
#pragma once

#include <functional>
#include <utility>
#include <vector>

namespace qrm {

class StopStack {
 public:
  StopStack() = default;
  StopStack(const StopStack&) = delete;
  StopStack& operator=(const StopStack&) = delete;
  ~StopStack() { StopAll(); }

  void Push(std::function<void()> stop) { stops_.push_back(std::move(stop)); }

  // Runs every pushed stop, newest first; the stack is empty afterwards.
  void StopAll() {
    while (!stops_.empty()) {
      std::function<void()> stop = std::move(stops_.back());
      stops_.pop_back();
      stop();
    }
  }

  size_t size() const { return stops_.size(); }

 private:
  std::vector<std::function<void()>> stops_;
};

}  // namespace qrm
