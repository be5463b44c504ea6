#include "cmd/qrm-host/host_metrics.h"

#include <fmt/format.h>

#include "common/malloc_tuning.h"
#include "common/metrics/metrics.h"

namespace qrm::host {
namespace {

// "/runtime.v1.RuntimeService/Version" -> "Version".
std::string_view ShortMethod(std::string_view full) {
  const size_t slash = full.rfind('/');
  return slash == std::string_view::npos ? full : full.substr(slash + 1);
}

void ShimFamilies(const shim::ShimCounters& c, std::string& out) {
  out +=
      "# HELP qrm_cri_calls_total CRI calls served by the shim, by method.\n"
      "# TYPE qrm_cri_calls_total counter\n";
  for (const auto& [method, m] : c.by_method) {
    out += fmt::format("qrm_cri_calls_total{{method=\"{}\"}} {}\n", ShortMethod(method),
                       m.calls.load());
  }
  out +=
      fmt::format("qrm_cri_calls_total{{method=\"unknown\"}} {}\n", c.unknown_methods.calls.load());
  out +=
      "# HELP qrm_cri_call_errors_total CRI calls answered with an error, by method.\n"
      "# TYPE qrm_cri_call_errors_total counter\n";
  for (const auto& [method, m] : c.by_method) {
    out += fmt::format("qrm_cri_call_errors_total{{method=\"{}\"}} {}\n", ShortMethod(method),
                       m.errors.load());
  }
  out +=
      "# HELP qrm_cri_calls_by_mode_total CRI calls intercepted by qrm or passed through.\n"
      "# TYPE qrm_cri_calls_by_mode_total counter\n";
  out += fmt::format("qrm_cri_calls_by_mode_total{{mode=\"intercepted\"}} {}\n",
                     c.intercepted_calls.load());
  out += fmt::format("qrm_cri_calls_by_mode_total{{mode=\"passthrough\"}} {}\n",
                     c.passthrough_calls.load());
  out +=
      "# HELP qrm_cri_passthrough_seconds Time from request to the runtime's answer for "
      "passed-through unary calls.\n# TYPE qrm_cri_passthrough_seconds summary\n";
  out += fmt::format("qrm_cri_passthrough_seconds_sum {}\n",
                     static_cast<double>(c.passthrough_latency_ns_sum.load()) / 1e9);
  out += fmt::format("qrm_cri_passthrough_seconds_count {}\n", c.passthrough_latency_count.load());
  const std::pair<const char*, const std::atomic<uint64_t>*> events[] = {
      {"admission_failures", &c.admission_failures},
      {"rollbacks", &c.rollbacks},
      {"releases", &c.releases},
      {"applier_updates", &c.applier_updates},
      {"applier_failures", &c.applier_failures}};
  out +=
      "# HELP qrm_cri_shim_events_total Shim events: refused admissions, rollbacks after a "
      "runtime failure, releases, reconcile updates and their failures.\n"
      "# TYPE qrm_cri_shim_events_total counter\n";
  for (const auto& [name, value] : events) {
    out += fmt::format("qrm_cri_shim_events_total{{event=\"{}\"}} {}\n", name, value->load());
  }
}

void PluginFamilies(const registry::PluginRegistry& registry, std::string& out) {
  int healthy = 0, stopped = 0;
  for (const auto& e : registry.Endpoints()) (e->stopped() ? stopped : healthy)++;
  out +=
      "# HELP qrm_plugins_registered Registered resource plugins by state.\n"
      "# TYPE qrm_plugins_registered gauge\n";
  out += fmt::format("qrm_plugins_registered{{state=\"healthy\"}} {}\n", healthy);
  out += fmt::format("qrm_plugins_registered{{state=\"stopped\"}} {}\n", stopped);
}

// malloc's view of the process, so a long run can tell a leak (in_use grows) from memory
// parked in the arenas (free grows); RSS alone cannot (bench SOAK).
void HeapFamily(std::string& out) {
  const HeapBytes heap = CurrentHeapBytes();
  out +=
      "# HELP qrm_heap_bytes Bytes malloc holds: in live blocks, and free in its arenas.\n"
      "# TYPE qrm_heap_bytes gauge\n";
  out += fmt::format("qrm_heap_bytes{{state=\"in_use\"}} {}\n", heap.in_use);
  out += fmt::format("qrm_heap_bytes{{state=\"free\"}} {}\n", heap.free);
}

}  // namespace

void RegisterHostCollectors(const shim::ShimCounters& counters,
                            const registry::PluginRegistry& registry) {
  metrics::Default().AddCollector([&counters](std::string& out) { ShimFamilies(counters, out); });
  metrics::Default().AddCollector([&registry](std::string& out) { PluginFamilies(registry, out); });
  metrics::Default().AddCollector(HeapFamily);
}

}  // namespace qrm::host
