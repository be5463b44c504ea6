// The API call that binds a pod to a node, as kube-scheduler's DefaultBinder makes it: POST of a
// v1.Binding to the pod's binding subresource. The extender's bind verb answers with it and the
// caller (which holds the API client) makes the call.
#pragma once

#include <string>

#include "cluster/extender/extender_types.h"

namespace qrm::cluster::scheduler {

struct BindPlan {
  std::string path;  // /api/v1/namespaces/<namespace>/pods/<name>/binding
  std::string body;  // {"kind":"Binding","apiVersion":"v1","metadata":{...},"target":{...}}
  // Whether the pod now counts as load on the node (the extender knew the pod from a filter or
  // prioritize request, or from the pod informer, and could estimate it).
  bool assumed = false;
};

// The path and body only (assumed false). The metadata carries the pod's UID, so the API server
// refuses the binding when the name now belongs to another pod.
BindPlan MakeBindPlan(const extender::ExtenderBindingArgs& args);

}  // namespace qrm::cluster::scheduler
