// Pictures of the machine for `qrmctl topology`: text (optionally coloured) and SVG.
#pragma once

#include <string>

#include "machine/topology.h"
#include "qrmctl/cpu_map.h"

namespace qrm::ctl {

// Sockets, NUMA nodes, cores (threads side by side) with each CPU's owner key, memory and
// NICs per node, and a legend. ANSI colours when `color`.
std::string RenderTopologyText(const machine::MachineTopology& machine, const CpuMap& map,
                               bool color);

// The same picture as a standalone SVG document.
std::string RenderTopologySvg(const machine::MachineTopology& machine, const CpuMap& map);

}  // namespace qrm::ctl
