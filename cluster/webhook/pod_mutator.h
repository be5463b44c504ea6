// The pod webhook's decision on a pod being created (docs/webhook.md): the
// qrm.io/resources.<container> annotations its plugin resources imply, the QoS level its
// resources imply, or a refusal when a hand-written annotation contradicts them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/webhook/json_patch.h"
#include "cluster/webhook/webhook_config.h"
#include "common/status.h"

namespace qrm::webhook {

struct PodMutation {
  std::vector<PatchOp> patch;          // empty: the pod is left as it is
  std::vector<std::string> warnings;   // for the client (kubectl prints them)
  std::vector<std::string> written;    // the annotation keys the patch writes
  std::optional<std::string> refusal;  // set: the pod is refused, and why
};

// `pod_json` is the Pod of an AdmissionRequest (request.object). kInvalidArgument naming the
// field when it is not a readable Pod.
StatusOr<PodMutation> MutatePod(const WebhookConfig& config, std::string_view pod_json);

}  // namespace qrm::webhook
