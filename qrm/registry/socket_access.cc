#include "qrm/registry/socket_access.h"

#include "common/metrics/metrics.h"

namespace qrm::registry {

PeerCheckedListener::RefusalHook CountPeerRefusals(const std::string& socket) {
  // Looked up once: the hook runs on the accept thread and must stay cheap.
  metrics::Counter& refused = metrics::Default().GetCounter(
      "qrm_socket_peer_refused_total",
      "Connections refused because the peer's uid and gid are not on the socket's allowlist.",
      {{"socket", socket}});
  return [&refused] { refused.Inc(); };
}

}  // namespace qrm::registry
