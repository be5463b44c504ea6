// After a node's pods were evicted, whether they have left it, as Cluster Autoscaler checks
// before it deletes a drained node: a GET of each pod answers 404, or names a pod of that name
// bound to another node or to none yet (a StatefulSet's replacement). A pod still bound to the
// node, terminating or not, has not left: its containers may still run there.
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/kube/kube_client.h"
#include "common/status.h"

namespace qrm::cluster::drain {

// From the answer to GET `url` (/api/v1/namespaces/{ns}/pods/{name}): true for 404 or a pod
// whose spec.nodeName is not `node`. kInvalidArgument for a 200 that is not a JSON object or
// whose spec.nodeName is not a string; the API error (the code and the server's message) for
// any other answer. Errors name the URL.
StatusOr<bool> PodLeftNode(const kube::KubeResponse& got, std::string_view node,
                           std::string_view url);

struct PodsGoneWait {
  std::chrono::milliseconds poll_interval{5000};  // between two rounds of GETs
  std::chrono::milliseconds timeout{0};           // from the first round
};

// What is still on the node when the wait ended: indexes into the `pods` given, each with why
// ("still on the node", or the last error of its GET), in ascending order.
struct PodsGoneResult {
  std::vector<std::pair<size_t, std::string>> remaining;
  bool stopped = false;
};

// GETs every pod in `pods` each round until all have left `node`, `wait.timeout` passed or
// the stop came.
PodsGoneResult WaitForPodsGone(const kube::KubeClient& client, std::string_view node,
                               const std::vector<std::pair<std::string, std::string>>& pods,
                               const PodsGoneWait& wait, const std::stop_token& stop);

}  // namespace qrm::cluster::drain
