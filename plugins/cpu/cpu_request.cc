#include "plugins/cpu/cpu_request.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "common/protocol_keys.h"
#include "plugins/cpu/cpu_plugin_config.h"

namespace qrm::cpu {

StatusOr<CpuRequest> ParseCpuRequest(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                                     const qos::RoleTable& roles, const CpuLayout& layout,
                                     int allocatable) {
  if (req.pod_uid().empty() || req.container_name().empty()) {
    return InvalidArgumentError(
        fmt::format("pod_uid \"{}\" / container_name \"{}\": both are required", req.pod_uid(),
                    req.container_name()));
  }
  CpuRequest out;
  StatusOr<qos::QosRequirement> qos = qos::ResolveQos(req, roles);
  if (!qos.ok()) return qos.status();
  out.qos = *qos;

  if (req.resource_requests().contains(kResourceName)) {
    StatusOr<double> quantity =
        qos::RequestedQuantity(req, kResourceName, static_cast<double>(layout.online().Size()));
    if (!quantity.ok()) return quantity.status();
    // Milli-CPUs first, so 2.0000000001 from float arithmetic is 2 CPUs, not 3.
    out.milli = std::llround(*quantity * 1000);
    out.whole_cpus = static_cast<int>((out.milli + 999) / 1000);
  }
  if (out.qos.dedicated() && out.whole_cpus == 0) {
    return InvalidArgumentError(
        fmt::format("resource_requests[\"cpu\"] = {}: dedicated_cores needs at least one CPU",
                    static_cast<double>(out.milli) / 1000));
  }
  if (out.qos.dedicated() && out.whole_cpus > allocatable) {
    return InvalidArgumentError(fmt::format(
        "resource_requests[\"cpu\"] = {}: dedicated_cores asks for {} CPUs, the machine has {} "
        "that are not reserved",
        static_cast<double>(out.milli) / 1000, out.whole_cpus, allocatable));
  }

  for (uint64_t id : req.hint().nodes()) {
    const bool known =
        id < static_cast<uint64_t>(NumaMask::kMaxNodes) &&
        std::count(layout.nodes().begin(), layout.nodes().end(), static_cast<int>(id)) > 0;
    if (!known) {
      return InvalidArgumentError(
          fmt::format("hint.nodes: {} is not a NUMA node of this machine (nodes: {})", id,
                      fmt::join(layout.nodes(), ",")));
    }
    out.hint = out.hint.With(static_cast<int>(id));
  }
  out.hint_preferred = req.hint().preferred();

  if (auto it = req.annotations().find(kPreviousAllocationAnnotation);
      it != req.annotations().end() && out.qos.dedicated()) {
    StatusOr<CpuSet> previous = CpuSet::Parse(it->second);
    if (!previous.ok() || !previous->IsSubsetOf(layout.online())) {
      return InvalidArgumentError(
          fmt::format("annotations[\"{}\"] = \"{}\": not a set of this machine's online CPUs ({})",
                      kPreviousAllocationAnnotation, it->second, layout.online().ToString()));
    }
    out.previous = std::move(*previous);
  }
  return out;
}

}  // namespace qrm::cpu
