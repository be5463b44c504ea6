// WatchFeed: the events of one watch request of the test API server, from the collection that
// produces them to the connection that streams them (chunked, one JSON event per line, as the
// real API server writes a watch). Thread-safe: the collection pushes from any thread, the
// server's connection takes on its own.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "common/mutex.h"
#include "common/thread_annotations.h"

namespace qrm::testing {

class WatchFeed {
 public:
  using Clock = std::chrono::steady_clock;

  // `deadline`: when the server ends the watch (the request's timeoutSeconds).
  explicit WatchFeed(std::optional<Clock::time_point> deadline = std::nullopt)
      : deadline_(deadline) {}

  // Producer side. Push appends one event (a JSON object; the newline is added). Close ends
  // the response once what was pushed is written. Both are no-ops after Close or Cancel.
  void Push(const std::string& event) QRM_EXCLUDES(mu_);
  void Close() QRM_EXCLUDES(mu_);
  // The client went away (or the server stops): the producer may forget this feed.
  bool cancelled() const QRM_EXCLUDES(mu_);

  // Connection side.
  struct Batch {
    std::string data;     // the events pushed since the last Take, maybe none
    bool closed = false;  // nothing more will come after `data`
  };
  // Takes what is queued; when nothing is and the feed is open, `wake` is kept and called once
  // (from the producer's thread) when there is more or the feed closes.
  Batch Take(std::function<void()> wake) QRM_EXCLUDES(mu_);
  void Cancel() QRM_EXCLUDES(mu_);
  const std::optional<Clock::time_point>& deadline() const { return deadline_; }

 private:
  std::function<void()> TakeWake() QRM_REQUIRES(mu_);

  const std::optional<Clock::time_point> deadline_;
  mutable Mutex mu_;
  std::string queued_ QRM_GUARDED_BY(mu_);
  bool closed_ QRM_GUARDED_BY(mu_) = false;
  bool cancelled_ QRM_GUARDED_BY(mu_) = false;
  std::function<void()> wake_ QRM_GUARDED_BY(mu_);
};

}  // namespace qrm::testing
