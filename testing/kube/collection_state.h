// The state behind an ObjectCollection (internal to testing/kube): the objects, the event
// history and the open watches, under one mutex so that a watch starting sees every event
// after the state it replays.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "common/mutex.h"
#include "common/thread_annotations.h"
#include "testing/kube/object_collection.h"
#include "testing/kube/watch_feed.h"

namespace qrm::testing {

struct CollectionEvent {
  int64_t version = 0;
  std::string key;   // name or namespace/name
  std::string line;  // {"type":...,"object":...}
};

struct CollectionWatch {
  std::shared_ptr<WatchFeed> feed;
  std::string namespace_name;  // "" for every namespace
  bool bookmarks = false;
};

struct ObjectCollection::State {
  CollectionOptions options;
  std::string resource;  // "nodemetrics.slo.koordinator.sh", for messages
  mutable Mutex mu;
  std::map<std::string, std::string> objects QRM_GUARDED_BY(mu);
  int64_t version QRM_GUARDED_BY(mu) = 1000;
  std::vector<CollectionEvent> history QRM_GUARDED_BY(mu);
  int64_t compacted QRM_GUARDED_BY(mu) = 1000;  // no event at or before this is kept
  std::vector<CollectionWatch> watches QRM_GUARDED_BY(mu);
  // The first pages' snapshots, by continue token.
  std::map<std::string, std::pair<int64_t, std::vector<std::string>>> snapshots QRM_GUARDED_BY(mu);
  int writes QRM_GUARDED_BY(mu) = 0;
  int conflicts QRM_GUARDED_BY(mu) = 0;
  int fail_code QRM_GUARDED_BY(mu) = 0;
  int fail_times QRM_GUARDED_BY(mu) = 0;
  int watch_requests QRM_GUARDED_BY(mu) = 0;
  int list_requests QRM_GUARDED_BY(mu) = 0;
};

namespace collection {

using State = ObjectCollection::State;

std::string Serialize(const rapidjson::Value& v);
// The namespace of a key ("" for a cluster-scoped one) and its name.
std::string NamespaceOf(const std::string& key);
// Records an event of `type` for the object `json` (already stamped) and sends it to the
// watches that see its namespace.
void Emit(State& s, const std::string& type, const std::string& key, const std::string& json)
    QRM_REQUIRES(s.mu);
// The query's value of `name` ("" when absent), percent-decoded.
std::string QueryValue(const std::string& query, std::string_view name);

// GET of the collection: a list page or a watch. `namespace_name` "" for every namespace.
ApiResponse ListOrWatch(State& s, const ApiRequest& r, const std::string& namespace_name);
void Bookmark(State& s);
void CloseWatches(State& s);

}  // namespace collection
}  // namespace qrm::testing
