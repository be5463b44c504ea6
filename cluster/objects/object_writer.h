// CreateOrUpdate: makes one cluster-scoped object hold what its writer says, as a controller
// does with client-go (Get; Create when missing; Update with the resourceVersion read; on a
// 409 Conflict read again and retry).
//
// The update replaces only the members the writer owns (`status` of a NodeMetric; `zones` and
// `attributes` of a NodeResourceTopology) inside the object as the server returned it, so
// whatever else it carries (labels and owner references another controller set, a spec, fields
// newer than qrm) goes back unchanged. Every answer other than success is an error naming the
// method, the URL and the server's message (kube_client.h ApiError).
#pragma once

#include <map>
#include <string>

#include "cluster/kube/kube_client.h"
#include "common/status.h"

namespace qrm::cluster {

struct ObjectWrite {
  std::string collection;   // "/apis/slo.koordinator.sh/v1alpha1/nodemetrics"
  std::string name;         // the object's name (the node's)
  std::string create_body;  // the whole object, POSTed when it does not exist
  // member name -> its JSON, put into the current object for the update
  std::map<std::string, std::string> members;
  bool status_subresource = false;  // PUT <name>/status instead of <name>
  int max_conflicts = 5;
};

struct ObjectWriteResult {
  bool created = false;
  int conflicts = 0;             // 409s retried
  std::string resource_version;  // after the write
};

StatusOr<ObjectWriteResult> CreateOrUpdate(const kube::KubeClient& client,
                                           const ObjectWrite& write);

// `object` (JSON) with each of `members` replaced by (or added as) the given JSON; errors when
// either is not JSON or `object` is not an object.
StatusOr<std::string> ReplaceMembers(const std::string& object,
                                     const std::map<std::string, std::string>& members);

}  // namespace qrm::cluster
