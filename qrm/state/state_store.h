// StateStore: the host checkpoint, owner of PodResources in memory and on disk.
//
// On disk (format in qrm/state/README.md and docs/checkpoint-format.md):
//   <state_dir>/pods.journal       every mutation since the last compaction, one checksummed
//                                  record each (checkpoint/journal.h): a pod's whole new value
//                                  ({"op":"put","pod":{...}}) or its removal
//                                  ({"op":"remove_pod","pod_uid":U});
//   <state_dir>/pods/<uid>.json    each pod's checkpoint file.
// What the host holds is the pod files with the journal's records applied in order. The files
// are only ever written by this class.
//
// Admission and reconcile must never tell the runtime about an allocation the host could
// forget in a crash, so every mutation is made durable (its journal record appended and
// fdatasynced) BEFORE it becomes visible in memory. If that fails the mutation is not applied,
// memory keeps the previous state, and the error is returned: the caller must fail its
// operation. One record costs one append and one fdatasync of a file that exists, whatever the
// number of pods; concurrent mutations share their fdatasyncs (checkpoint/shared_journal.h).
// The pod files are written by compaction only: once the journal holds kCompactAfter records
// (or more than there are pods, or kCompactAfterBytes), Compact() writes every pod changed
// since the last compaction durably, syncs pods/, and starts a new journal. Between
// compactions a changed pod's file is the one of the last compaction (the journal holds what
// changed since), so a mutation costs no file creation and rename. A crash at any point
// leaves pod files that are current, stale or damaged only for pods the journal holds, and the
// journal's records win at Load. The host compacts at a clean stop too.
//
// Locking. A mutation of pod P runs in three steps, under the compaction lock (shared; Compact
// takes it exclusively) and P's writer lock (a per-pod mutex inside the store, see PodLocks):
//   1. read P's current value under the global mutex and compute the new one (a copy: stored
//      pods are immutable);
//   2. append its record durably, with no global lock held;
//   3. publish the new value under the global mutex (a pointer swap) and release P's lock.
// The global mutex is never held across encoding or I/O, so writers of different pods share
// their journal syncs instead of queueing behind each other, and readers (Snapshot, GetPod,
// GetContainer) wait only for a map lookup or a pointer copy. Writers of the same pod are
// ordered by P's lock, so a later state of P is never overwritten by an earlier one even if two
// callers race (admission already serializes per pod; the store does not rely on it). Lock
// order: compaction lock, pod writer lock, then the global mutex; no two pod locks are ever
// held at once.
//
// Call Load() once before anything else (not concurrently with mutations); mutations are
// refused until it succeeds, so a store that could not read its checkpoint cannot
// overwrite it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/journal.h"
#include "checkpoint/shared_journal.h"
#include "common/mutex.h"
#include "common/pod_locks.h"
#include "common/status.h"
#include "qrm/state/pod_resources.h"

namespace qrm::state {

class StateStore {
 public:
  static constexpr uint32_t kVersion = 1;
  static constexpr size_t kMaxUidLength = 200;
  // How many pod files Compact writes at once.
  static constexpr size_t kMaxParallelWrites = 16;
  // Compact once the journal holds this many records, or more than there are pods, or this many
  // bytes: a record is a whole pod, so a pod that grows container by container writes a
  // journal quadratic in its size, which a restart must read (P8).
  static constexpr uint64_t kCompactAfter = 1024;
  static constexpr uint64_t kCompactAfterBytes = 1 << 20;

  // e.g. /var/lib/qrm/state; Load() creates it (and pods/ inside it), mode 0700, if missing.
  explicit StateStore(std::string state_dir);
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  // Creates the directories if missing, removes temp files left by crashed writes, then
  // reads every <uid>.json in pods/ (other names, such as quarantined *.corrupt-* files, are
  // ignored):
  //  * no files: empty state, OK;
  //  * a corrupt file (the checkpoint library's kDataLoss): the library moved it aside, that
  //    pod is left out, the other pods load, and Load returns OK with
  //    recovered_from_corruption() true and a message listing every such file for the
  //    caller to log (it then rebuilds those pods from the plugins and the runtime). If a
  //    file could not be moved aside, that error is returned instead, since the next write
  //    would destroy the evidence;
  //  * a file of an unsupported version (another qrm's, older or newer): moved aside to
  //    <uid>.json.unsupported-version-<time> (kept for that qrm, out of this one's way) and
  //    handled like a corrupt file below, so the host starts and rebuilds the pod;
  //  Both kinds are counted in qrm_checkpoint_corrupt_total{file="host"}.
  //  * checksummed but invalid content (bad base64, unparsable protobuf, bad pod_affinity,
  //    wrong shape), a file not named after a valid uid, or a file whose name is not the uid
  //    inside it: kDataLoss naming the file and the pod/container/resource, files left in
  //    place. This is a qrm bug (or a foreign hand), not a disk fault, so it must not be
  //    silently dropped;
  //  * other I/O errors: returned as they are.
  // Then it reads pods.journal and applies its records over the files (a pod whose file was
  // damaged or stale comes back from its record), rewrites the files of the pods it holds, and
  // goes on appending to it. A torn last record (a crash mid-append) is dropped. A damaged
  // journal (a bad record before the last) is moved aside (pods.journal.corrupt-<time>),
  // counted in qrm_checkpoint_corrupt_total{file="host-journal"} and reported like a corrupt
  // file: the pods it held are rebuilt. A checksummed record qrm never writes is kDataLoss, the
  // journal left in place.
  Status Load();
  bool recovered_from_corruption() const;
  std::string recovery_message() const;
  const std::string& state_dir() const { return state_dir_; }
  // The file of pod `uid`: <state_dir>/pods/<uid>.json.
  std::string PodPath(const std::string& uid) const;
  // <state_dir>/pods.journal.
  std::string JournalPath() const;

  // Every pod, as pointers to immutable values: O(pods) pointer copies, and the result
  // never changes, whatever the store does afterwards.
  PodResources Snapshot() const;
  // Null if there is no such pod / container. The result is immutable and stays valid.
  std::shared_ptr<const PodAllocation> GetPod(const std::string& uid) const;
  std::shared_ptr<const ContainerAllocation> GetContainer(const std::string& uid,
                                                          const std::string& container) const;

  // Durable mutations (write first, then apply in memory). All fail with
  // kFailedPrecondition before a successful Load(), and with kInvalidArgument naming the uid
  // for a pod uid that is not a safe file name (ValidatePodUid).

  // Creates or replaces the container's allocation, creating the pod entry if needed and
  // updating its name and namespace. allocation.request.resource_name is cleared (one
  // request stands for all the container's resources). kInvalidArgument for an empty
  // container or resource name.
  Status PutContainer(const std::string& uid, const std::string& pod_name, const std::string& ns,
                      const std::string& container, ContainerAllocation allocation);
  // Records the pod-scope affinity, creating the pod entry if needed. kInvalidArgument for
  // an empty mask (an empty mask would be indistinguishable from "none" on disk).
  Status SetPodAffinity(const std::string& uid, const std::string& pod_name, const std::string& ns,
                        NumaMask affinity);
  // Removing the last container keeps the pod entry (and its pod affinity, which the
  // pod's later containers must reuse) until RemovePod. Removing something that is not
  // there is OK and writes nothing: the kubelet may remove what was never admitted.
  Status RemoveContainer(const std::string& uid, const std::string& container);
  // Deletes the pod's file durably (unlink, then fsync of pods/), then forgets the pod.
  Status RemovePod(const std::string& uid);

  // Applies many resource changes (the reconcile loop): each sets (uid, container,
  // resource) to `info`, adding the resource if new. Changes whose pod or container
  // vanished meanwhile are skipped, as are changes that alter nothing; a later change to the
  // same key wins. Each affected pod gets one journal record, under the rules above (the
  // pod's writer lock, durable record, publish), by up to kMaxParallelWrites threads at a
  // time, which share their fdatasyncs; unaffected pods are not written at all.
  //
  // Not atomic across pods: if a pod's write fails the others are still written, the error
  // of the first failed pod (in uid order) is returned, and the uids of the failed pods,
  // whose changes did not take effect (as for any failed mutation), are added to
  // `failed_uids` if given; the other pods' changes are in effect. A crash in the middle
  // likewise leaves some pods updated and others not. Both are safe: every pod file is
  // self-consistent on its own, and the next reconcile tick diffs the plugins' reports
  // against the checkpoint again and redoes what is missing.
  struct ResourceChange {
    std::string uid, container, resource;
    ::resourceplugin::v1alpha1::ResourceAllocationInfo info;
  };
  Status ApplyChanges(const std::vector<ResourceChange>& changes,
                      std::set<std::string>* failed_uids = nullptr);

  // OK if `uid` can name a file in pods/: non-empty, at most kMaxUidLength bytes, no '/' or
  // NUL, and not starting with '.' (which also excludes "." and ".."; dot files are the
  // checkpoint library's temp files). Kubernetes uids are UUIDs; anything else is refused
  // with kInvalidArgument naming the uid.
  static Status ValidatePodUid(const std::string& uid);

  // Writes every pod changed since the last compaction to its file durably, removes the files
  // of pods removed since, syncs pods/ and starts a new journal. On failure the journal stays
  // (it still holds every change) and the next mutation past the threshold tries again.
  // Mutations wait meanwhile. Called by the mutation that fills the journal, and at a clean
  // stop (Host::Stop).
  Status Compact();

  // Test hooks. `hook` is passed to checkpoint::WriteOptions::fault_hook for every pod file
  // written (after each journal record, without the sync steps, and at compaction, with
  // them); a removal reports its unlink as kRename. A failure there after the journal record
  // only leaves the file stale (logged; compaction rewrites it). `journal_hook` runs at each
  // step of a journal record (checkpoint/journal.h): a failure there refuses the mutation.
  // Both are called from the writing thread with no store lock held but the pod's writer lock,
  // and may be called from several threads at once.
  void SetFaultHookForTesting(checkpoint::FaultHook hook);
  void SetJournalFaultHookForTesting(checkpoint::JournalFaultHook journal_hook);

 private:
  // What a mutation does to a pod, computed from its current value (null if none):
  // nothing (nullopt), store a new value (non-null) or remove the pod (null).
  using PodEdit = std::optional<std::shared_ptr<const PodAllocation>>;
  // Runs a mutation of pod `uid` as described in the header comment.
  template <typename Edit>
  Status UpdatePod(const std::string& uid, Edit&& edit);
  // Makes a journal record (EncodePodRecord) durable.
  Status AppendRecord(const rapidjson::Document& record);
  // Brings pod `uid`'s file in line with `pod` (null: no file) durably, except for a removal,
  // whose directory the caller syncs (Compact).
  Status SyncPodFile(const std::string& uid, const PodAllocation* pod,
                     const checkpoint::FaultHook& hook) const;
  // Applies `journal`'s records to `pods` (Load) and marks their pods dirty.
  Status ApplyJournal(const checkpoint::JournalContents& journal, PodResources& pods)
      QRM_REQUIRES(mu_);
  // Load's second half: applies the journal's records to `pods` and opens it for appending.
  Status LoadJournal(PodResources& pods, std::vector<std::string>& corrupt) QRM_REQUIRES(mu_);
  checkpoint::JournalOptions JournalOptions();
  // OK once a journal is open for appending; otherwise Compact (which starts one).
  Status EnsureJournal();
  bool CompactionDue() const QRM_REQUIRES(mu_);
  Status CheckLoadedLocked() const QRM_REQUIRES(mu_);

  const std::string state_dir_;
  const std::string pods_dir_;
  // Shared by every mutation, exclusive in Compact: a compaction sees no mutation in flight.
  std::shared_mutex compaction_;
  PodLocks writers_;  // per pod, held across one durable write
  mutable Mutex mu_;  // never held across I/O after Load
  // Set by Load (null if it could not be opened for appending) and replaced only under the
  // exclusive compaction lock; never null again once set. The journal locks itself.
  std::unique_ptr<checkpoint::SharedJournal> journal_;
  uint64_t next_generation_ = 1;  // of the journal Compact starts when there is none
  std::set<std::string> dirty_ QRM_GUARDED_BY(mu_);  // pods changed since the last compaction
  bool loaded_ QRM_GUARDED_BY(mu_) = false;
  bool recovered_ QRM_GUARDED_BY(mu_) = false;
  std::string recovery_message_ QRM_GUARDED_BY(mu_);
  PodResources pods_ QRM_GUARDED_BY(mu_);
  checkpoint::FaultHook fault_hook_ QRM_GUARDED_BY(mu_);
  // Its own mutex: the journal calls it while holding its lock, which mu_ may be held around.
  Mutex hook_mu_;
  checkpoint::JournalFaultHook journal_hook_ QRM_GUARDED_BY(hook_mu_);
};

}  // namespace qrm::state
