// Refusals: calls the shim answers itself, with an error, instead of forwarding them.
//
// Every refusal is counted in qrm_cri_shim_refused_total{method, reason} of the process's
// metrics registry and logged in one line (with the pod when known):
//   no_request   the request message never arrived (the client cancelled, its deadline
//                expired, it half-closed without a message or went away mid-message);
//                debug level: a client hiccup, not qrm's business beyond the count
//   no_response  the runtime answered OK without a response message
//   undecodable  an intercepted request that does not parse (InvalidArgument)
//   admission    admission, PreStartContainer or the pod's skip annotation refused it
//   internal     qrm could not handle it (Internal)
#pragma once

#include <string>
#include <string_view>

#include <grpcpp/support/status.h>

namespace qrm::shim {

enum class RefusalReason { kNoRequest, kNoResponse, kUndecodable, kAdmission, kInternal };

std::string_view RefusalReasonName(RefusalReason reason);

// "/runtime.v1.RuntimeService/CreateContainer" -> "CreateContainer".
std::string_view ShortMethodName(std::string_view full_name);

// Counts and logs a refusal of `method` (a short or full name); `pod` names the pod (and
// container) when known, else is empty. Returns `status` unchanged, for `return Refused(...)`.
grpc::Status Refused(std::string_view method, RefusalReason reason, const std::string& pod,
                     grpc::Status status);

// Counts a refusal without logging it (the caller logged it with more context).
void CountRefusal(std::string_view method, RefusalReason reason);

// The count so far for (method, reason): for tests and qrmctl-like readers.
double RefusedCount(std::string_view method, RefusalReason reason);

}  // namespace qrm::shim
