// StateStore: the host checkpoint, owner of PodResources in memory and on disk.
//
// Admission and reconcile must never tell the runtime about an allocation the host could
// forget in a crash, so every mutation is written durably (checkpoint::Write) BEFORE it
// becomes visible in memory. If the write fails the mutation is not applied, memory keeps
// the previous state, and the error is returned: the caller must fail its operation.
// (A failure at the final directory fsync comes after the rename, so the file may already
// hold the refused mutation; memory does not, and the next successful write replaces it.)
//
// Thread-safe: one mutex, held across encode + write, because writes to one path must be
// ordered (a later state must never be overwritten by an earlier one).
//
// The file (format in qrm/state/README.md) is only ever written by this class. Call Load()
// once before anything else; mutations are refused until it succeeds, so a store that
// could not read its checkpoint cannot overwrite it.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_file.h"
#include "common/status.h"
#include "qrm/state/pod_resources.h"

namespace qrm::host {

class StateStore {
 public:
  static constexpr uint32_t kVersion = 1;

  // e.g. /var/lib/qrm/state/qrm_checkpoint.json; the directory must exist.
  explicit StateStore(std::string path);
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  // Removes temp files left by a crashed write, then reads the checkpoint:
  //  * missing: empty state, OK;
  //  * corrupt (the checkpoint library's kDataLoss): the library moved it aside, the
  //    state starts empty and Load returns OK with recovered_from_corruption() true and
  //    the library's message kept for the caller to log (it then rebuilds from the
  //    plugins and the runtime). If the file could not be moved aside, that error is
  //    returned instead, since the next write would destroy the evidence;
  //  * unsupported version: kFailedPrecondition, file untouched (it may be a newer qrm's);
  //  * checksummed but invalid content (bad base64, unparsable protobuf, bad
  //    pod_affinity, wrong shape): kDataLoss naming the pod/container/resource, file left
  //    in place. This is a qrm bug, not a disk fault, so it must not be silently dropped;
  //  * other I/O errors (including a missing directory): returned as they are.
  Status Load();
  bool recovered_from_corruption() const;
  std::string recovery_message() const;
  const std::string& path() const { return path_; }

  PodResources Snapshot() const;  // a copy
  std::optional<PodAllocation> GetPod(const std::string& uid) const;
  std::optional<ContainerAllocation> GetContainer(const std::string& uid,
                                                  const std::string& container) const;

  // Durable mutations (write first, then apply in memory). All fail with
  // kFailedPrecondition before a successful Load().

  // Creates or replaces the container's allocation, creating the pod entry if needed and
  // updating its name and namespace. allocation.request.resource_name is cleared (one
  // request stands for all the container's resources). kInvalidArgument for an empty uid,
  // container or resource name.
  Status PutContainer(const std::string& uid, const std::string& pod_name, const std::string& ns,
                      const std::string& container, ContainerAllocation allocation);
  // Records the pod-scope affinity, creating the pod entry if needed. kInvalidArgument for
  // an empty uid or mask (an empty mask would be indistinguishable from "none" on disk).
  Status SetPodAffinity(const std::string& uid, const std::string& pod_name, const std::string& ns,
                        NumaMask affinity);
  // Removing the last container keeps the pod entry (and its pod affinity, which the
  // pod's later containers must reuse) until RemovePod. Removing something that is not
  // there is OK and writes nothing: the kubelet may remove what was never admitted.
  Status RemoveContainer(const std::string& uid, const std::string& container);
  Status RemovePod(const std::string& uid);

  // Applies many resource changes with ONE durable write (the reconcile loop): each sets
  // (uid, container, resource) to `info`, adding the resource if new. Changes whose pod or
  // container vanished meanwhile are skipped, as are changes that alter nothing; if nothing
  // is left, nothing is written. A later change to the same key wins.
  struct ResourceChange {
    std::string uid, container, resource;
    pb::ResourceAllocationInfo info;
  };
  Status ApplyChanges(const std::vector<ResourceChange>& changes);

  // Test hook: fault injection passed through to checkpoint::WriteOptions::fault_hook.
  void SetFaultHookForTesting(checkpoint::FaultHook hook);

 private:
  // Saves the pods named by `uids`, runs `mutate` on state_, writes state_ durably and, if
  // the write fails, restores the saved pods. Readers never see the intermediate state
  // because they wait on mu_, which the caller holds.
  template <typename Mutate>
  Status CommitLocked(const std::vector<std::string>& uids, Mutate&& mutate);
  Status CheckLoadedLocked() const;

  const std::string path_;
  mutable std::mutex mu_;
  bool loaded_ = false;
  bool recovered_ = false;
  std::string recovery_message_;
  PodResources state_;
  checkpoint::FaultHook fault_hook_;
};

}  // namespace qrm::host
