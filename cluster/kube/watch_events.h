// The bodies of list and watch answers of the Kubernetes API, as a reflector reads them:
//  * a list: {"kind":"<Kind>List","metadata":{"resourceVersion","continue"},"items":[...]};
//  * a watch: a stream of {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}},
//    each on its own line (the API server's streaming JSON encoder ends each with "\n").
// Objects are handed on as their JSON text with the identity a cache needs (key and
// resourceVersion); decoding them is the user's job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/kube/kube_client.h"
#include "common/status.h"

namespace qrm::kube {

struct ObjectIdentity {
  std::string key;               // "name", or "namespace/name"
  std::string resource_version;  // metadata.resourceVersion
};

struct ListedObject {
  ObjectIdentity id;
  std::string json;
};

struct ListPage {
  std::string resource_version;  // metadata.resourceVersion
  std::string continue_token;    // metadata.continue ("" on the last page)
  std::vector<ListedObject> items;
};

// A list answer's body. Errors name the item and field: "items[3].metadata.name: missing".
StatusOr<ListPage> ParseListPage(std::string_view body);

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  ObjectIdentity id;               // for a bookmark only the resourceVersion
  std::string json;                // the object (for kError the Status object)
  std::optional<ApiStatus> error;  // kError: the Status (code 410: the version expired)
};

// One line of a watch stream.
StatusOr<WatchEvent> ParseWatchEvent(std::string_view line);

// Cuts a watch body, which arrives in pieces split anywhere, into lines. A line longer than
// `max_line` (an object bigger than the API server ever sends) is an error.
class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line = 64u << 20) : max_line_(max_line) {}
  // Appends a piece; returns the complete lines it finished (without their "\n"; blank lines
  // are dropped).
  StatusOr<std::vector<std::string>> Feed(std::string_view piece);

 private:
  size_t max_line_;
  std::string partial_;
};

}  // namespace qrm::kube
