// SharedJournal: a journal many threads append to, each returning once its record is durable,
// with one fdatasync shared by every record written while the previous one ran (group commit).
//
// A durable append costs a disk round trip (fdatasync) that a second writer need not pay on
// its own: while one thread syncs, others write their records and queue; the next sync covers
// all of them. So concurrent admissions of different pods, or a reconcile writing many pods,
// pay one round trip per batch rather than per record, and a lone writer pays exactly one.
//
// Failure: if a sync fails, every record written since the last good sync (the one whose sync
// failed and any written meanwhile) is cut off the file and each of their Appends fails; the
// callers then leave their changes unapplied, as for any failed durable write. If the cut
// itself fails the journal is broken (broken()) and the owner must Replace it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>

#include <rapidjson/document.h>

#include "checkpoint/journal.h"
#include "common/mutex.h"
#include "common/status.h"

namespace qrm::checkpoint {

class SharedJournal {
 public:
  // `writer` must not sync its appends itself (JournalOptions::sync false): this class does.
  explicit SharedJournal(std::unique_ptr<JournalWriter> writer);

  // Appends `record` and returns once it is durable. Thread-safe.
  Status Append(const rapidjson::Value& record);

  // Swaps in a new journal (compaction). The caller must keep every Append out meanwhile.
  void Replace(std::unique_ptr<JournalWriter> writer);

  uint64_t records() const;
  uint64_t bytes() const;
  uint64_t generation() const;
  bool broken() const;
  const std::string& path() const { return path_; }

 private:
  // Makes records up to `seq` durable, or reports why they are not. Holds sync_mu_.
  Status SyncThrough(uint64_t seq);

  const std::string path_;
  Mutex sync_mu_;  // one sync at a time; taken before mu_, never while holding it
  mutable Mutex mu_;
  std::unique_ptr<JournalWriter> writer_ QRM_GUARDED_BY(mu_);
  uint64_t written_ QRM_GUARDED_BY(mu_) = 0;  // records appended (sequence numbers from 1)
  uint64_t synced_ QRM_GUARDED_BY(mu_) = 0;   // records up to this one are durable
  // Records after synced_ up to this one were cut after a failed sync: their Appends fail.
  uint64_t failed_ QRM_GUARDED_BY(mu_) = 0;
  Status failure_ QRM_GUARDED_BY(mu_);
  // The writer's length and record count at the last good sync, to cut back to.
  uint64_t synced_bytes_ QRM_GUARDED_BY(mu_) = 0;
  uint64_t synced_records_ QRM_GUARDED_BY(mu_) = 0;
};

}  // namespace qrm::checkpoint
