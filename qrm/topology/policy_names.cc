#include "qrm/topology/policy_names.h"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace qrm::topology {
namespace {

constexpr std::array<std::pair<Policy, std::string_view>, 4> kPolicies = {{
    {Policy::kNone, "none"},
    {Policy::kBestEffort, "best-effort"},
    {Policy::kRestricted, "restricted"},
    {Policy::kSingleNumaNode, "single-numa-node"},
}};

constexpr std::array<std::pair<Scope, std::string_view>, 2> kScopes = {{
    {Scope::kContainer, "container"},
    {Scope::kPod, "pod"},
}};

StatusOr<bool> ParseGoBool(std::string_view text) {
  for (std::string_view yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == yes) return true;
  }
  for (std::string_view no : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == no) return false;
  }
  return InvalidArgumentError(fmt::format("\"{}\" is not a boolean", text));
}

}  // namespace

StatusOr<Policy> ParsePolicy(std::string_view name) {
  for (const auto& [policy, spelling] : kPolicies) {
    if (name == spelling) return policy;
  }
  return InvalidArgumentError(
      fmt::format("unknown topology manager policy \"{}\" (want none, best-effort, restricted or "
                  "single-numa-node)",
                  name));
}

std::string_view PolicyName(Policy policy) {
  for (const auto& [p, spelling] : kPolicies) {
    if (p == policy) return spelling;
  }
  return "unknown";
}

StatusOr<Scope> ParseScope(std::string_view name) {
  for (const auto& [scope, spelling] : kScopes) {
    if (name == spelling) return scope;
  }
  return InvalidArgumentError(
      fmt::format("unknown topology manager scope \"{}\" (want container or pod)", name));
}

std::string_view ScopeName(Scope scope) {
  for (const auto& [s, spelling] : kScopes) {
    if (s == scope) return spelling;
  }
  return "unknown";
}

StatusOr<PolicyOptions> ParsePolicyOptions(const std::map<std::string, std::string>& options) {
  PolicyOptions result;
  for (const auto& [name, value] : options) {
    if (name != kPreferClosestNumaNodesOption) {
      return InvalidArgumentError(
          fmt::format("unknown topology manager policy option \"{}\" (known: {})", name,
                      kPreferClosestNumaNodesOption));
    }
    StatusOr<bool> enabled = ParseGoBool(value);
    if (!enabled.ok()) {
      return InvalidArgumentError(fmt::format("bad value for topology manager policy option {}: {}",
                                              name, enabled.status().message()));
    }
    result.prefer_closest_numa_nodes = *enabled;
  }
  return result;
}

}  // namespace qrm::topology
