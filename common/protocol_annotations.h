// Annotations qrm adds to the resourceplugin.v1alpha1 protocol. The wire format is the
// kubewharf one, field for field; these keys ride in its free-form annotation maps, so a
// plugin that does not know them keeps working.
#pragma once

namespace qrm {

// On a ResourceRequest the host replays to a plugin that no longer reports a container it
// holds (the plugin lost its state file): the allocation_result the plugin gave before, e.g.
// "2-5" for CPUs. A plugin takes exactly that again when it is still free, so a running
// container keeps its CPUs, nodes or NIC; otherwise it allocates as for a new container.
inline constexpr const char* kPreviousAllocationAnnotation = "qrm.io/previous-allocation";

}  // namespace qrm
