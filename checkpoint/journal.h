// Journal: an append-only file of checksummed records, the cheap durable write between two
// checkpoints of the same state.
//
// A state whose changes are small (one container's allocation) is kept as a snapshot (a
// checkpoint file, checkpoint_file.h) plus a journal of the changes made since. Appending a
// record costs one write and one fdatasync of a file that already exists: no temp file, no
// rename, no directory sync, and nothing that grows with the size of the state. The owner
// compacts (writes a new snapshot and starts a new journal) once the journal has grown past
// the snapshot, so the journal's length stays proportional to the state.
//
// On disk, one record per line:
//   fnv1a64:<16 hex digits> <canonical JSON of the record>\n
// The checksum is the one of checkpoint_file.h, over the canonical bytes that follow it on
// the line, so any language can verify a journal. The first line is the header record
//   {"journal":1,"generation":G}
// naming the generation of the snapshot the records follow: a snapshot records the
// generation of the journal that continues it, and a journal of an older generation than
// its snapshot holds changes the snapshot already contains (a crash came between writing the
// snapshot and starting the new journal).
//
// Reading (ReadJournal) tells a torn append from corruption:
//   - the last line without its newline, failing its checksum, or NUL bytes after the last
//     newline: an append a crash interrupted. Its change was never acknowledged (Append
//     returns only after fdatasync), so the line is dropped and Continue cuts it off (without
//     JournalOptions::sync, a machine crash may also drop acknowledged records from the end);
//   - any earlier line that fails its checksum or is not a JSON object: kDataLoss naming the
//     line. Records after it cannot be trusted to apply to what came before.
//
// One writer per path, as for checkpoints.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <sys/types.h>

#include "common/status.h"

namespace qrm::checkpoint {

inline constexpr uint32_t kJournalFormat = 1;

// The steps of an append, for fault injection in tests (as WriteOptions::fault_hook).
enum class JournalStep { kAppend, kSync };
using JournalFaultHook = std::function<Status(JournalStep)>;

struct JournalOptions {
  mode_t file_mode = 0600;
  // Whether Append returns only once the record is durable (fdatasync), or once it is in the
  // page cache: then it survives a crash of the process but not of the machine, and the owner
  // must be able to recover a lost tail some other way (a plugin ledger: the host replays,
  // docs/checkpoint-format.md). AppendDurably is always durable.
  bool sync = true;
  JournalFaultHook fault_hook;
};

struct JournalContents {
  uint64_t generation = 0;
  std::vector<rapidjson::Document> records;  // after the header, in order
  uint64_t valid_bytes = 0;                  // the length up to the end of the last intact record
  bool torn_tail = false;                    // bytes after valid_bytes were dropped
};

// Errors, each naming the file: kNotFound when it does not exist; kDataLoss for a bad header or
// a bad line before the last; I/O errors.
StatusOr<JournalContents> ReadJournal(const std::string& path);
// The same on bytes already in memory (`name` is used in messages).
StatusOr<JournalContents> ParseJournal(std::string_view content, const std::string& name);

class JournalWriter {
 public:
  // Replaces `path` with a journal holding only the header of `generation`, atomically and
  // durably (as checkpoint::Write: temp file, fsync, rename, directory fsync).
  static StatusOr<std::unique_ptr<JournalWriter>> Start(const std::string& path,
                                                        uint64_t generation,
                                                        const JournalOptions& options = {});
  // Appends to the journal `contents` was read from, after cutting off its torn tail.
  static StatusOr<std::unique_ptr<JournalWriter>> Continue(const std::string& path,
                                                           const JournalContents& contents,
                                                           const JournalOptions& options = {});
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Appends `record` (a JSON object without floating-point numbers) and returns once it is
  // durable (or, without JournalOptions::sync, written to the file). On failure the writer
  // cuts the file back to its last good length; if even that fails, or the file was removed
  // under the writer, it is broken (broken(); every later Append fails) and the owner must
  // Start a new journal of a new generation, which discards whatever this one holds.
  Status Append(const rapidjson::Value& record);
  // Append, durable whatever JournalOptions::sync says (with it, the records before this one
  // become durable too).
  Status AppendDurably(const rapidjson::Value& record);

  // Makes every record written so far durable (fdatasync). Touches only the descriptor, so
  // it may run while another thread Appends (checkpoint/shared_journal.h relies on it).
  Status Sync() const;
  // Cuts the journal back to `bytes` holding `records` (records written after a Sync that
  // failed), durably; on failure the writer is broken.
  Status TruncateTo(uint64_t bytes, uint64_t records);

  const std::string& path() const { return path_; }
  uint64_t generation() const { return generation_; }
  uint64_t records() const { return records_; }  // appended, the header not counted
  uint64_t bytes() const { return bytes_; }
  bool broken() const { return broken_; }

 private:
  JournalWriter(std::string path, int fd, uint64_t generation, uint64_t records, uint64_t bytes,
                JournalOptions options);
  Status AppendRecord(const rapidjson::Value& record, bool sync);

  std::string path_;
  int fd_;
  uint64_t generation_;
  uint64_t records_;
  uint64_t bytes_;
  JournalOptions options_;
  bool broken_ = false;
};

// One journal line for `record`: "fnv1a64:<hex> <canonical JSON>\n".
StatusOr<std::string> FormatJournalLine(const rapidjson::Value& record);

}  // namespace qrm::checkpoint
