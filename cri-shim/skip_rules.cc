#include "cri-shim/skip_rules.h"

#include <fmt/format.h>

#include "common/protocol_keys.h"

namespace qrm::shim {

StatusOr<bool> ShouldSkip(const PodInfo& pod, const std::set<std::string>& skip_namespaces) {
  bool skip = skip_namespaces.contains(pod.ns);
  if (auto it = pod.annotations.find(kSkipAnnotation); it != pod.annotations.end()) {
    if (it->second == "true") {
      skip = true;
    } else if (it->second != "false") {
      return InvalidArgumentError(
          fmt::format("pod {}/{}: annotation {}=\"{}\": must be \"true\" or \"false\"", pod.ns,
                      pod.name, kSkipAnnotation, it->second));
    }
  }
  return skip;
}

}  // namespace qrm::shim
