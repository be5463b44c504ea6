// ObjectCollection: a collection of objects served by a TestApiServer with the API server's
// semantics for what qrm's writers and informers do (no control plane exists on a test
// machine). Paths are those of the real API: `path` is the collection's
// ("/apis/slo.koordinator.sh/v1alpha1/nodemetrics"); for a namespaced kind it is the list of
// every namespace ("/api/v1/pods") and each object lives under
// "/api/v1/namespaces/<ns>/pods/<name>".
//  * GET <object>: the object, or 404 NotFound;
//  * GET <collection>: a list {kind: <Kind>List, metadata.resourceVersion, items}; with
//    `limit` a page and metadata.continue, served from the first page's snapshot (410 Expired
//    once the collection was compacted past it);
//  * GET <collection>?watch=1: a watch, chunked, one {"type","object"} per line. With
//    resourceVersion R the events after R (410 Expired in an ERROR event when R is older than
//    the history kept: Compact), without one (or "0") an ADDED per object first; BOOKMARK
//    events when allowWatchBookmarks=true and the test calls Bookmark; the server ends it
//    after timeoutSeconds, or when the test calls CloseWatches;
//  * POST <collection>: create; 409 AlreadyExists when the name is taken, 400 for a body
//    without metadata.name or of another kind/apiVersion; with a status subresource the body's
//    status is dropped, as the API server does for a custom resource;
//  * PUT <object>: replace; metadata.resourceVersion must be the stored one (409 Conflict
//    otherwise, and when it is missing); with a status subresource the stored status is kept;
//  * PUT <object>/status (status subresource only): replaces the status alone, same rule;
//  * DELETE <object>: removes it (a DELETED event), answering the object;
//  * PATCH <object>/status (status_patch option, nodes) with application/json-patch+json: the
//    JSON Patch applied to the status as node_status_store.h does (415, 400, 422 alike);
//  * PATCH <object> (merge_patch option) with application/merge-patch+json: the RFC 7386 merge
//    of the body into the object (what `kubectl cordon` style writers send); a
//    metadata.resourceVersion in the body is a precondition, as the API server makes it (409
//    Conflict when it is not the stored one); with a status subresource the status stays as
//    stored; 415 for another content type, 400 for a body that is not a JSON object;
//  * POST <object>/binding (binding option, pods): the Binding subresource: sets spec.nodeName
//    and the PodScheduled condition (True, now), 409 when the pod is bound already.
// Every write gives a new resourceVersion (one counter per collection) and an event; creation
// a uid and creationTimestamp. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "testing/kube/test_api_server.h"

namespace qrm::testing {

struct CollectionOptions {
  std::string path;  // "/apis/slo.koordinator.sh/v1alpha1/nodemetrics", "/api/v1/pods"
  std::string kind;  // "NodeMetric"
  std::string api_version;
  bool status_subresource = true;
  bool namespaced = false;
  bool binding = false;       // serve the pods' binding subresource
  bool status_patch = false;  // serve JSON Patch of the status subresource
  bool merge_patch = false;   // serve JSON merge patch of the object
};

class ObjectCollection {
 public:
  // Adds the routes to `server` (which must outlive this).
  ObjectCollection(TestApiServer& server, CollectionOptions options);
  ~ObjectCollection();  // ends its watches
  ObjectCollection(const ObjectCollection&) = delete;
  ObjectCollection& operator=(const ObjectCollection&) = delete;

  // Objects by key: the name, or "<namespace>/<name>" for a namespaced kind.
  std::optional<std::string> Get(const std::string& key) const;
  std::vector<std::string> Names() const;
  // Stores `json` (another controller wrote it): created or replaced with a new
  // resourceVersion (and an ADDED or MODIFIED event), not counted as a write.
  void Seed(const std::string& key, const std::string& json);
  void Delete(const std::string& key);  // a DELETED event; nothing when absent
  // Forgets the event history: a watch from an older resourceVersion gets 410 Expired.
  void Compact();
  void Bookmark();      // a BOOKMARK to every watch that allows them
  void CloseWatches();  // ends every watch, as the server's timeout would
  int open_watches() const;
  int watch_requests() const;  // watches started (including those answered 410)
  int list_requests() const;
  int64_t resource_version() const;

  // The next `times` writes (POST, PUT or PATCH) are answered `code` (409 Conflict, 500, ...).
  void FailWrites(int code, int times);
  int writes() const;     // accepted creates, updates, patches and bindings
  int conflicts() const;  // 409s answered for a stale or missing resourceVersion

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace qrm::testing
