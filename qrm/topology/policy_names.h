// Names of topology manager policies, scopes and policy options, as the kubelet spells them in
// --topology-manager-policy, --topology-manager-scope and --topology-manager-policy-options.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"
#include "qrm/topology/merge.h"

namespace qrm::topology {

// "none", "best-effort", "restricted", "single-numa-node".
StatusOr<Policy> ParsePolicy(std::string_view name);
std::string_view PolicyName(Policy policy);

// "container", "pod".
StatusOr<Scope> ParseScope(std::string_view name);
std::string_view ScopeName(Scope scope);

// Option name -> value, e.g. {"prefer-closest-numa-nodes": "true"}. The only known option is
// prefer-closest-numa-nodes, whose value is a boolean spelled as Go's strconv.ParseBool accepts
// it (1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False). Errors name the unknown option
// or the bad value.
StatusOr<PolicyOptions> ParsePolicyOptions(const std::map<std::string, std::string>& options);

inline constexpr std::string_view kPreferClosestNumaNodesOption = "prefer-closest-numa-nodes";

}  // namespace qrm::topology
