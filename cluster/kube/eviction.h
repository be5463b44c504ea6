// Evicting a pod through the Eviction API (policy/v1), the way `kubectl drain` does: the API
// server checks the pod's PodDisruptionBudgets and refuses (429) an eviction that would break
// one, so the watermark guard can never take down more replicas than their owners allow.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cluster/kube/kube_client.h"

namespace qrm::kube {

enum class EvictionOutcome {
  kEvicted,          // 200/201: the pod is being deleted (or would be, in a dry run)
  kBlockedByBudget,  // 429: a PodDisruptionBudget does not allow it now; try again later
  kGone,             // 404: the pod no longer exists
  kError,            // anything else, a transport error or a bad argument
};

std::string_view EvictionOutcomeName(EvictionOutcome outcome);  // "evicted", "blocked", ...

struct EvictionResult {
  EvictionOutcome outcome = EvictionOutcome::kError;
  int http_code = 0;  // 0 when no answer came
  // The server's message (429: "Cannot evict pod as it would violate the pod's disruption
  // budget.", with its causes after it in parentheses), or the error.
  std::string message;
};

struct EvictOptions {
  std::optional<int64_t> grace_period_seconds;  // none: the pod's own; else >= 0
  bool dry_run = false;                         // the server checks everything, deletes nothing
};

// The Eviction object POSTed for the pod, e.g.
// {"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web-1","namespace":"default"},
//  "deleteOptions":{"gracePeriodSeconds":30}}; "deleteOptions":{"dryRun":["All"]} in a dry run
// (deleteOptions is left out when it would be empty).
std::string EvictionBody(std::string_view pod_namespace, std::string_view name,
                         const EvictOptions& options);

// POST /api/v1/namespaces/{namespace}/pods/{name}/eviction. The namespace and name are checked
// (DNS-1123) before anything is sent. Logs one line per call naming the pod.
EvictionResult EvictPod(const KubeClient& client, std::string_view pod_namespace,
                        std::string_view name, const EvictOptions& options = {});

}  // namespace qrm::kube
