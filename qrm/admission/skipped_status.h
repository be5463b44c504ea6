// What became of the resources containers were admitted without (failure policy "ignore").
//
// When the skipped plugin answers again, the reconcile loop sends it the skipped Allocate each
// tick until it holds. If the plugin answers but refuses (the request does not fit: e.g. the
// CPUs a dedicated pod needs are taken), retrying every tick changes nothing by itself, and the
// container keeps running without the resource. Such a resource is reported instead of being
// retried silently: one warning line naming the pod, container, resource and the plugin's
// reason; the gauge qrm_skipped_resources_unallocatable; and qrmctl (admin ListAllocations,
// skipped_resources). It is still retried (capacity may free up); success clears it.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "common/mutex.h"
#include "common/status.h"

namespace qrm::admission {

class SkippedStatus {
 public:
  using Key = std::tuple<std::string, std::string, std::string>;  // pod uid, container, resource

  // A replay of the skipped resource failed. An outage (the plugin did not answer) is not a
  // refusal and changes nothing; a refusal is recorded and logged the first time.
  void ReplayFailed(const Key& key, const Status& status);
  // The plugin holds the resource now.
  void Allocated(const Key& key);
  // Forgets a pod's entries (it is released).
  void ForgetPod(const std::string& pod_uid);
  // The recorded refusal of `key`, "" when none.
  std::string Refusal(const Key& key) const;

 private:
  void Publish() QRM_REQUIRES(mu_);  // the gauge

  mutable Mutex mu_;
  std::map<Key, std::string> refused_ QRM_GUARDED_BY(mu_);
};

}  // namespace qrm::admission
