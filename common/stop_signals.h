// How every qrm daemon stops: SIGTERM and SIGINT are blocked in the main thread before any
// other thread exists (threads inherit the mask), so only the thread that waits for them with
// sigwait / sigtimedwait ever sees one, never a gRPC or HTTP worker in the middle of a call.
#pragma once

#include <csignal>
#include <string>

namespace qrm {

// Blocks SIGTERM and SIGINT in the calling thread; returns the set to wait on. Call it first
// thing in main, before starting threads.
sigset_t BlockStopSignals();

// Waits for one of `set` and returns its number.
int WaitForStopSignal(const sigset_t& set);

// "SIGTERM", "SIGINT", or "signal <n>" for any other: for the line a daemon logs as it stops
// (strsignal is not safe while other threads run).
std::string StopSignalName(int sig);

}  // namespace qrm
