// ObjectCollection: a cluster-scoped collection of objects served by a TestApiServer with the
// API server's semantics for what qrm's writers do (no control plane exists on a test machine):
//  * GET <path>/<name>: the object, or 404 NotFound;
//  * GET <path>: a list {kind: <Kind>List, metadata.resourceVersion, items};
//  * POST <path>: create; 409 AlreadyExists when the name is taken, 400 for a body without
//    metadata.name or of another kind/apiVersion; with a status subresource the body's status
//    is dropped, as the API server does for a custom resource;
//  * PUT <path>/<name>: replace; metadata.resourceVersion must be the stored one (409
//    Conflict otherwise, and when it is missing); with a status subresource the stored status
//    is kept;
//  * PUT <path>/<name>/status (status subresource only): replaces the status alone, the same
//    resourceVersion rule.
// Every write gives a new resourceVersion (one counter per collection), and creation a uid and
// creationTimestamp. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "testing/kube/test_api_server.h"

namespace qrm::testing {

struct CollectionOptions {
  std::string path;  // "/apis/slo.koordinator.sh/v1alpha1/nodemetrics"
  std::string kind;  // "NodeMetric"
  std::string api_version;
  bool status_subresource = true;
};

class ObjectCollection {
 public:
  // Adds the routes to `server` (which must outlive this).
  ObjectCollection(TestApiServer& server, CollectionOptions options);
  ~ObjectCollection();
  ObjectCollection(const ObjectCollection&) = delete;
  ObjectCollection& operator=(const ObjectCollection&) = delete;

  std::optional<std::string> Get(const std::string& name) const;
  std::vector<std::string> Names() const;
  // Stores `json` as is (a controller created it), with a new resourceVersion.
  void Seed(const std::string& name, const std::string& json);
  // The next `times` writes (POST or PUT) are answered `code` (409 Conflict, 500, ...).
  void FailWrites(int code, int times);
  int writes() const;     // accepted creates and updates
  int conflicts() const;  // 409s answered for a stale or missing resourceVersion

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace qrm::testing
