// Crash-safe, versioned, checksummed state files.
//
// On disk a checkpoint is one JSON object:
//   {"version":N,"checksum":"fnv1a64:<16 hex>","data":{...}}
// where the checksum covers the canonical bytes of `data` (canonical_json.h), so
// a checkpoint can be verified by any language without qrm.
//
// Writes are atomic and durable: a temp file in the same directory is written,
// fsync'ed and renamed over the target, then the directory is fsync'ed. A crash
// at any point leaves either the old or the new file, never a mix. Every
// failure is returned; nothing here reports success after a failed step.
//
// One writer per path: the owner of a state file serializes its own writes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <sys/types.h>

#include "common/status.h"

namespace qrm::checkpoint {

// The steps of a durable write, in order; FaultHook sees each before it runs.
enum class WriteStep { kCreateTemp, kWriteTemp, kSyncTemp, kRename, kSyncDir };
const char* WriteStepName(WriteStep step);

// Test-only fault injection: called before each step; a non-OK status aborts
// the write with that status (as if the step had failed), and a hook may also
// end the process to simulate a crash at that point.
using FaultHook = std::function<Status(WriteStep)>;

struct WriteOptions {
  mode_t file_mode = 0600;
  // false: the file is still replaced atomically for readers (temp file, rename), but neither
  // it nor the directory is fsynced (no kSyncTemp or kSyncDir step): a machine crash may leave
  // the old file, the new one or a damaged one. Only for content that is durable elsewhere
  // or that may be lost (files in tests).
  bool sync = true;
  FaultHook fault_hook;
};

struct ReadOptions {
  // Versions this reader understands; anything else is kFailedPrecondition and
  // the file is left where it is (it may belong to a newer qrm).
  uint32_t min_version = 1;
  uint32_t max_version = 1;
  // Move a corrupt file aside to "<path>.corrupt-<unix-time>" (never over an
  // existing file) so the owner can start afresh without losing the evidence.
  // Offline tools (qrmctl checkpoint verify) leave it false.
  bool quarantine_corrupt = true;
};

struct Checkpoint {
  uint32_t version = 0;
  std::string checksum;
  rapidjson::Document data;  // always an object
};

// Writes `data` (a JSON object) durably to `path`. Errors: kInvalidArgument for
// data that cannot be stored (not an object, floats, bad UTF-8: see
// canonical_json.h); the errno-derived code of the failing step otherwise
// (e.g. kPermissionDenied on a read-only directory, kResourceExhausted when the
// disk is full). On failure the previous file is untouched and no temp remains.
Status Write(const std::string& path, uint32_t version, const rapidjson::Value& data,
             const WriteOptions& options = {});

// Reads and verifies `path`. Errors, each with a message naming the file:
//   kNotFound            the file does not exist (IsMissing)
//   kDataLoss            corrupt: empty, truncated, not JSON, wrong shape or
//                        checksum mismatch (IsCorrupt); quarantined if asked
//   kFailedPrecondition  version outside [min_version, max_version]
//                        (IsUnsupportedVersion)
//   other                I/O errors while reading
StatusOr<Checkpoint> Read(const std::string& path, const ReadOptions& options = {});

// Verifies checkpoint bytes already in memory; `name` is used in messages. The same checks
// and errors as Read, without I/O (nothing is ever moved aside).
StatusOr<Checkpoint> Parse(std::string_view content, const std::string& name,
                           const ReadOptions& options = {});

inline bool IsMissing(const Status& s) {
  return s.code() == StatusCode::kNotFound;
}
inline bool IsCorrupt(const Status& s) {
  return s.code() == StatusCode::kDataLoss;
}
inline bool IsUnsupportedVersion(const Status& s) {
  return s.code() == StatusCode::kFailedPrecondition;
}

// Removes temp files left by writes to `path` that crashed before their
// rename. Call once at start-up, before the first Write, by the file's owner.
// Returns how many were removed.
StatusOr<int> RemoveStaleTempFiles(const std::string& path);

// The same for every file of directory `dir` at once (".<name>.tmp-XXXXXX" for any name),
// for owners of a directory of checkpoints, whose crashed first write of a file left a
// temp file but no file to name.
StatusOr<int> RemoveStaleTempFilesIn(const std::string& dir);

}  // namespace qrm::checkpoint
