// The extender's HTTP routes (docs/scheduling.md, "Serving"): the verbs kube-scheduler calls
// and what an operator reads.
//   POST /filter, /prioritize, /bind   the extender protocol (ExtenderService)
//   GET  /metrics, /healthz, /readyz   /readyz is 503 until `ready` (the informers listed)
//   GET  /debug/informers              each informer's counters, as JSON
#pragma once

#include <functional>
#include <map>
#include <string>

#include "cluster/kube/kube_client.h"
#include "cluster/scheduler/extender_service.h"
#include "cluster/scheduler/informers.h"
#include "common/http/http_server.h"

namespace qrm::cluster::scheduler {

// The verbs' paths, as urlPrefix + "/" + filterVerb etc. of the scheduler's configuration.
inline constexpr char kFilterPath[] = "/filter";
inline constexpr char kPrioritizePath[] = "/prioritize";
inline constexpr char kBindPath[] = "/bind";

// `service`, `client` and `informers` must outlive the server the routes go to.
std::map<std::string, http::Route> ExtenderRoutes(ExtenderService& service,
                                                  const kube::KubeClient& client,
                                                  const ExtenderInformers& informers,
                                                  std::function<bool()> ready);

// The binding's API call: POST of the plan's body; an error naming the URL and the answer.
Status PostBinding(const kube::KubeClient& client, const BindPlan& plan);

// The informers' counters as a JSON array (the /debug/informers answer).
std::string InformersJson(const std::vector<InformerState>& states);

}  // namespace qrm::cluster::scheduler
