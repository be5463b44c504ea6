// JSON Patch (RFC 6902) operations on a pod's annotations, as an admission webhook returns
// them. Internal to cluster/webhook.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qrm::webhook {

struct PatchOp {
  std::string op;          // "add" or "replace"
  std::string path;        // a JSON Pointer (RFC 6901)
  std::string value_json;  // the value as JSON text
};

// Pointer tokens are escaped with kube::EscapeJsonPointer (cluster/kube/json_pointer.h).
// "/metadata/annotations/<escaped key>".
std::string AnnotationPath(std::string_view key);

// `text` as a JSON string value.
std::string JsonStringValue(std::string_view text);

// The patch document: [{"op":...,"path":...,"value":...}, ...].
std::string EncodePatch(const std::vector<PatchOp>& ops);

}  // namespace qrm::webhook
