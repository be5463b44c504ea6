// LoadAwareSchedulingArgs as users write them: the `args` of the LoadAwareScheduling entry of a
// KubeSchedulerConfiguration's pluginConfig, alone in a file, in YAML or JSON, with the
// camelCase field names of Koordinator's v1beta3 types:
//
//   apiVersion: kubescheduler.config.k8s.io/v1beta3   # optional; or .../v1
//   kind: LoadAwareSchedulingArgs                     # optional
//   usageThresholds:
//     cpu: 65
//     memory: 95
//   aggregated:
//     usageThresholds:
//       cpu: 60
//     usageAggregationType: p95
//     usageAggregatedDuration: 5m                     # a metav1.Duration
//
// Decoding is strict, as kube-scheduler's: an unknown field, a quoted number or boolean, and a
// duration that is not a whole number of seconds are refused, naming the line (YAML) and the
// field path. The result is
// defaulted (SetDefaults) and validated (Validate), so a bad value stops the extender at start.
#pragma once

#include <string>
#include <string_view>

#include "cluster/loadaware/args.h"
#include "common/status.h"

namespace qrm::cluster::scheduler {

// The document's text. kInvalidArgument: "line 4: usageThresholds.cpu: expected an integer,
// got \"high\"", or Validate's message.
StatusOr<loadaware::LoadAwareArgs> ParseLoadAwareArgs(std::string_view text);

// The file at `path`; errors are prefixed with the path.
StatusOr<loadaware::LoadAwareArgs> ReadLoadAwareArgsFile(const std::string& path);

}  // namespace qrm::cluster::scheduler
