// The metric every peer-checked qrm socket counts its refusals in.
#pragma once

#include <string>

#include "common/grpc/peer_checked_listener.h"

namespace qrm::registry {

// A refusal hook for PeerCheckedListener that increments
// qrm_socket_peer_refused_total{socket="<socket>"} ("registration", "admin").
PeerCheckedListener::RefusalHook CountPeerRefusals(const std::string& socket);

}  // namespace qrm::registry
