// NodeStatusStore: v1 Nodes served by a TestApiServer with the API server's semantics for
// what qrm-advisor does to them (no control plane exists on a test machine):
//  * GET /api/v1/nodes/<name>: the node, or 404 NotFound;
//  * PATCH /api/v1/nodes/<name>/status with Content-Type application/json-patch+json: the
//    RFC 6902 operations add, remove, replace and test applied in order and atomically (all
//    or none); 415 UnsupportedMediaType for any other content type (merge and strategic
//    merge patches are not served here), 400 BadRequest for a body that is not a JSON array
//    of operations, 422 Unprocessable Entity for a failing test, a path that does not
//    resolve, an operation this store does not serve (move, copy), or a status.capacity /
//    status.allocatable value that is not a string; 404 for an unknown node. As the status
//    strategy does, the spec stays as stored; each accepted patch gives a new resourceVersion.
// Every PATCH is recorded with its answer. Thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "testing/kube/test_api_server.h"

namespace qrm::testing {

struct RecordedPatch {
  std::string node;
  std::string content_type;
  std::string body;
  int code = 0;  // what the server answered
};

class NodeStatusStore {
 public:
  // Adds the routes to `server` (which must outlive this).
  explicit NodeStatusStore(TestApiServer& server);
  ~NodeStatusStore();
  NodeStatusStore(const NodeStatusStore&) = delete;
  NodeStatusStore& operator=(const NodeStatusStore&) = delete;

  // Stores `json` (a v1 Node, as the kubelet registered it) under `name`.
  void Put(const std::string& name, const std::string& json);
  std::optional<std::string> Get(const std::string& name) const;
  // Another writer's JSON Patch (the kubelet's): applied as a PATCH would be, not recorded.
  Status Apply(const std::string& name, const std::string& patch);
  // The next `times` requests (GET or PATCH) are answered `code` with a Status object.
  void FailRequests(int code, int times);
  std::vector<RecordedPatch> patches() const;
  int gets() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// RFC 6902 (add, remove, replace, test) applied to `document`, all or nothing. kInvalidArgument
// for a patch that is not an array of operations (the API server's 400); kFailedPrecondition
// naming the operation's index, op and path otherwise (its 422).
StatusOr<std::string> ApplyJsonPatch(const std::string& document, const std::string& patch);

}  // namespace qrm::testing
