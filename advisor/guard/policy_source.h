// The guard's policy file (docs/guard.md, "Policy reload"): loaded at start, reloaded when it
// changes, without a restart.
//
// - Load: the first load. An unreadable or invalid file is the caller's error: the daemon
//   refuses to start rather than guard with a policy nobody wrote.
// - Reload: a cheap stat each call; the file is read only when its mtime, size or inode
//   changed, and a policy is applied only when the content parses to a different policy (an
//   edit of the layout alone, or a touch, changes nothing).
// - An invalid or unreadable reload keeps the last good policy and says so once per distinct
//   bad content (or read error), naming the file and the error: an operator fixing the file
//   sees each new mistake, and a loop reloading every second does not repeat the same one.
//   Going back to the last good content, or a new good one, ends the rejection.
//
// One owner (the guard loop): not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <sys/stat.h>

#include "advisor/guard/guard_policy.h"
#include "common/status.h"

namespace qrm::advisor::guard {

enum class ReloadResult {
  kUnchanged,      // same file, or content that parses to the policy in use
  kApplied,        // a new policy is in use
  kRejected,       // bad content or a read error, first seen: `error` says so
  kStillRejected,  // the same bad content or error as last time: already said
};

struct PolicyReload {
  ReloadResult result = ReloadResult::kUnchanged;
  Status error;  // kRejected and kStillRejected: "guard policy <path>: kept the last good ..."
};

class PolicySource {
 public:
  explicit PolicySource(std::string path);

  // Reads and parses the file; an error names the file (InvalidArgument for a bad policy,
  // the errno's code for a read error).
  Status Load();
  // Applies the file's content if it changed and is valid; before a successful Load, a
  // failure is kRejected like any other.
  PolicyReload Reload();

  const GuardPolicy& policy() const { return policy_; }
  const std::string& path() const { return path_; }

 private:
  struct Stamp {
    int64_t mtime_ns = 0, size = 0;
    uint64_t inode = 0;
    friend bool operator==(const Stamp&, const Stamp&) = default;
  };

  static Stamp StampOf(const struct stat& st);
  PolicyReload Reject(std::string key, const Status& error);

  std::string path_;
  GuardPolicy policy_;
  bool loaded_ = false;  // policy_ was read from the file
  std::string good_content_;
  std::optional<Stamp> stamp_;      // of the content last read, good or bad
  std::optional<std::string> bad_;  // what was last rejected: content or read error
  Status bad_error_;                // and why
};

}  // namespace qrm::advisor::guard
