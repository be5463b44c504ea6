#include "checkpoint/shared_journal.h"

#include <utility>

#include <fmt/format.h>

namespace qrm::checkpoint {

SharedJournal::SharedJournal(std::unique_ptr<JournalWriter> writer) : path_(writer->path()) {
  MutexLock lock(mu_);
  synced_bytes_ = writer->bytes();
  synced_records_ = writer->records();
  writer_ = std::move(writer);
}

Status SharedJournal::Append(const rapidjson::Value& record) {
  uint64_t seq = 0;
  {
    MutexLock lock(mu_);
    // The writer takes back a failed write itself: nothing to undo here.
    QRM_RETURN_IF_ERROR(writer_->Append(record));
    seq = ++written_;
  }
  return SyncThrough(seq);
}

Status SharedJournal::SyncThrough(uint64_t seq) {
  MutexLock syncing(sync_mu_);
  uint64_t target = 0, target_bytes = 0, target_records = 0;
  const JournalWriter* writer = nullptr;
  {
    MutexLock lock(mu_);
    if (synced_ >= seq) return Status::Ok();  // a sync that ran while we queued covered it
    if (failed_ >= seq) return failure_;
    target = written_;
    target_bytes = writer_->bytes();
    target_records = writer_->records();
    writer = writer_.get();
  }
  // Without mu_: appends go on meanwhile, and the next sync covers them.
  const Status synced = writer->Sync();
  MutexLock lock(mu_);
  if (synced.ok()) {
    synced_ = target;
    synced_bytes_ = target_bytes;
    synced_records_ = target_records;
    return Status::Ok();
  }
  // What was written since the last good sync may or may not be on disk: take all of it back
  // (records written during the failed sync included) so that no caller's refused change
  // survives a restart.
  failed_ = written_;
  const Status cut = writer_->TruncateTo(synced_bytes_, synced_records_);
  failure_ = Status(synced.code(),
                    fmt::format("journal {}: {}{}", path_, synced.message(),
                                cut.ok() ? "" : "; cutting it back failed too: " + cut.message()));
  return failure_;
}

void SharedJournal::Replace(std::unique_ptr<JournalWriter> writer) {
  MutexLock syncing(sync_mu_);
  MutexLock lock(mu_);
  // Everything written to the old journal is durable in what replaced it.
  synced_ = written_;
  synced_bytes_ = writer->bytes();
  synced_records_ = writer->records();
  writer_ = std::move(writer);
}

uint64_t SharedJournal::records() const {
  MutexLock lock(mu_);
  return writer_->records();
}

uint64_t SharedJournal::bytes() const {
  MutexLock lock(mu_);
  return writer_->bytes();
}

uint64_t SharedJournal::generation() const {
  MutexLock lock(mu_);
  return writer_->generation();
}

bool SharedJournal::broken() const {
  MutexLock lock(mu_);
  return writer_->broken();
}

}  // namespace qrm::checkpoint
