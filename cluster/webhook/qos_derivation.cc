#include "cluster/webhook/qos_derivation.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::webhook {
namespace {

bool Positive(const std::map<std::string, Quantity>& list, const std::string& name) {
  const auto it = list.find(name);
  return it != list.end() && it->second.MilliValue() > 0;
}

// The first reclaimed resource a container's limits ask, as `container "x" limits name: q`.
std::optional<std::string> ReclaimedAsk(const WebhookConfig& config, const ContainerView& c) {
  for (const auto& [name, quantity] : c.limits) {
    if (std::find(config.reclaimed_resources.begin(), config.reclaimed_resources.end(), name) !=
            config.reclaimed_resources.end() &&
        quantity.MilliValue() > 0) {
      return fmt::format("container {} limits {}: {}", Quote(c.name), name, quantity.ToString());
    }
  }
  return std::nullopt;
}

// The first container asking native CPU or memory, which a reclaimed pod should not.
std::optional<std::string> NativeAsk(const PodView& pod) {
  for (const ContainerView& c : pod.containers) {
    for (const char* name : {"cpu", "memory"}) {
      if (Positive(c.limits, name) || Positive(c.requests, name)) {
        return fmt::format("container {} asks native {}", Quote(c.name), name);
      }
    }
  }
  return std::nullopt;
}

// Kubernetes' Guaranteed class (GetPodQOS), per container: CPU and memory limits set and
// requests, where given, equal to them; and every CPU limit a whole number of cores.
bool GuaranteedWholeCores(const PodView& pod) {
  for (const ContainerView& c : pod.containers) {
    for (const char* name : {"cpu", "memory"}) {
      const auto limit = c.limits.find(name);
      if (limit == c.limits.end() || limit->second.MilliValue() <= 0) return false;
      const auto request = c.requests.find(name);
      if (request != c.requests.end() && !(request->second == limit->second)) return false;
    }
    if (c.limits.at("cpu").MilliValue() % 1000 != 0) return false;
  }
  return !pod.containers.empty();
}

}  // namespace

QosDerivation DeriveQos(const WebhookConfig& config, const PodView& pod) {
  QosDerivation out;
  for (const ContainerView& c : pod.containers) {
    if (auto ask = ReclaimedAsk(config, c)) {
      // A pod mixing both would run its native requests in the reclaimed pool: its author
      // must say which level is meant.
      if (auto native = NativeAsk(pod)) {
        out.warnings.push_back(
            fmt::format("qos_level not derived: {} (reclaimed_cores) but {}; set "
                        "katalyst.kubewharf.io/qos_level yourself",
                        *ask, *native));
        return out;
      }
      out.level = "reclaimed_cores";
      out.required = true;
      out.reason = *ask;
      return out;
    }
  }
  if (config.guaranteed_whole_cores_dedicated && GuaranteedWholeCores(pod)) {
    out.level = "dedicated_cores";
    out.reason = "the pod is Guaranteed with whole-core CPU limits";
  }
  return out;
}

}  // namespace qrm::webhook
