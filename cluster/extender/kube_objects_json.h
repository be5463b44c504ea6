// JSON of the Kubernetes objects of kube_objects.h, by the rules of go_json_reader.h and
// go_json_writer.h (docs/scheduling.md).
#pragma once

#include <string_view>

#include "cluster/extender/go_json_reader.h"
#include "cluster/extender/go_json_writer.h"
#include "cluster/extender/kube_objects.h"

namespace qrm::extender {

// Readers by GoDecoder's rules; null reads as nothing (a struct) or the empty list.
Status ReadObjectMeta(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                      ObjectMeta& out);
Status ReadPod(const GoDecoder& d, const JsonValue& v, const JsonPath& path, Pod& out);
Status ReadNode(const GoDecoder& d, const JsonValue& v, const JsonPath& path, Node& out);
Status ReadNodeList(const GoDecoder& d, const JsonValue& v, const JsonPath& path, NodeList& out);

// {"metadata":{},"items":[...]} as Go writes a NodeList with no list metadata: each node as
// received, or (built here) its metadata and status fields that are set.
void WriteNodeList(const NodeList& list, GoJsonWriter& w);

// Whether `s` is a time Go's time.Parse(time.RFC3339, s) accepts, as metav1.Time reads it.
bool IsRfc3339Time(std::string_view s);

}  // namespace qrm::extender
