// The host's scrape-time metrics: values other components keep (the CRI shim's counters,
// the registry's plugins), rendered into the default registry's /metrics output.
#pragma once

#include "cri-shim/counters.h"
#include "qrm/registry/plugin_registry.h"

namespace qrm::host {

// Registers collectors for `counters` and `registry`; both must outlive the metrics server.
void RegisterHostCollectors(const shim::ShimCounters& counters,
                            const registry::PluginRegistry& registry);

}  // namespace qrm::host
