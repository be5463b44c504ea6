// JSON for the kube-scheduler extender verbs (extender_types.h), as kube-scheduler and a Go
// extender built on k8s.io/kube-scheduler/extender/v1 read and write it:
//  * Decode* read by Go's encoding/json rules (go_json_reader.h): keys in any case, unknown
//    keys skipped, wrong JSON types refused. Errors are kInvalidArgument naming the type, the
//    path and the value: ExtenderArgs: Pod.spec.priority: expected an int32, got "high".
//  * Encode* write what json.Marshal writes for the upstream struct (go_json_writer.h): every
//    field, in the struct's order, under its Go name, null for a nil pointer, map or slice.
#pragma once

#include <string>
#include <string_view>

#include "cluster/extender/extender_types.h"
#include "common/status.h"

namespace qrm::extender {

// The filter and prioritize verbs' request body.
StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view json);

// One Pod or Node object as the API server sends it (a list item, a watch event's object),
// read by the same rules; a node keeps its whole text (Node::json).
StatusOr<Pod> DecodePod(std::string_view json);
StatusOr<Node> DecodeNode(std::string_view json);

// The filter verb's answer.
std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result);
StatusOr<ExtenderFilterResult> DecodeExtenderFilterResult(std::string_view json);

// The prioritize verb's answer.
std::string EncodeHostPriorityList(const HostPriorityList& list);
StatusOr<HostPriorityList> DecodeHostPriorityList(std::string_view json);

// The preempt verb.
StatusOr<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(std::string_view json);
std::string EncodeExtenderPreemptionResult(const ExtenderPreemptionResult& result);
StatusOr<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(std::string_view json);

// The bind verb.
StatusOr<ExtenderBindingArgs> DecodeExtenderBindingArgs(std::string_view json);
std::string EncodeExtenderBindingArgs(const ExtenderBindingArgs& args);
std::string EncodeExtenderBindingResult(const ExtenderBindingResult& result);
StatusOr<ExtenderBindingResult> DecodeExtenderBindingResult(std::string_view json);

}  // namespace qrm::extender
