// The Katalyst QoS level a pod's resources imply (docs/webhook.md, "QoS level"). Internal to
// cluster/webhook.
//
// Two rules, of different strength:
//   * a pod whose limits ask a reclaimed resource (Katalyst's reclaimed_millicpu, Koordinator's
//     batch-cpu, ...) is reclaimed_cores: only that level may use those resources, so a pod
//     annotated otherwise is refused (`required`);
//   * with guaranteed_whole_cores_dedicated, a Guaranteed pod whose CPU limits are all whole
//     cores is dedicated_cores: an operator's default, which a hand-written level overrides.
// Anything else is not derived: the pod keeps what its author wrote (Katalyst reads no level
// as shared_cores).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster/webhook/pod_view.h"
#include "cluster/webhook/webhook_config.h"

namespace qrm::webhook {

struct QosDerivation {
  std::optional<std::string> level;
  bool required = false;  // a different hand-written level contradicts the pod's resources
  std::string reason;     // why `level`, for messages: container "x" limits name: quantity
  std::vector<std::string> warnings;  // what looked derivable but was not, and why
};

QosDerivation DeriveQos(const WebhookConfig& config, const PodView& pod);

}  // namespace qrm::webhook
