// NIC discovery (see "NICs" in discovery.h). Internal to machine.
#pragma once

#include "common/status.h"
#include "machine/discovery.h"
#include "machine/topology.h"

namespace qrm::machine {

// Appends the NICs of the root namespace and of every namespace under options.netns_dir to
// topo.nics. Needs topo.nodes (to resolve unknown NUMA nodes).
Status DiscoverNics(const DiscoveryOptions& options, MachineTopology& topo);

}  // namespace qrm::machine
