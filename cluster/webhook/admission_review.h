// AdmissionReview (admission.k8s.io/v1), field for field from k8s.io/api/admission/v1/types.go:
// the request kube-apiserver POSTs to a webhook, and the answer it expects back.
//
// Decoding follows Go's encoding/json as kube-apiserver's webhook client relies on it: absent
// and null fields are their zero value, unknown fields are ignored, a field of the wrong type
// is an error naming it. The answer is written as json.Marshal writes the Go types (their
// field order and omitempty rules).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace qrm::webhook {

inline constexpr std::string_view kAdmissionV1 = "admission.k8s.io/v1";
inline constexpr std::string_view kAdmissionV1beta1 = "admission.k8s.io/v1beta1";
inline constexpr std::string_view kAdmissionReviewKind = "AdmissionReview";

// metav1.GroupVersionKind and metav1.GroupVersionResource.
struct GroupVersionKind {
  std::string group;
  std::string version;
  std::string kind;
};
struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;
};

// authenticationv1.UserInfo.
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

// AdmissionRequest. runtime.RawExtension fields hold the JSON text of the object, "" when the
// field is absent or null.
struct AdmissionRequest {
  std::string uid;
  GroupVersionKind kind;
  GroupVersionResource resource;
  std::string sub_resource;
  std::optional<GroupVersionKind> request_kind;
  std::optional<GroupVersionResource> request_resource;
  std::string request_sub_resource;
  std::string name;
  std::string namespace_;
  std::string operation;  // CREATE, UPDATE, DELETE or CONNECT
  UserInfo user_info;
  std::string object;
  std::string old_object;
  std::optional<bool> dry_run;
  std::string options;
};

// metav1.Status as a webhook's answer uses it (no details: qrm never sends them).
struct ApiStatus {
  std::string status;  // "Success" or "Failure"
  std::string message;
  std::string reason;  // metav1.StatusReason: "Forbidden", "BadRequest", ...
  int32_t code = 0;
};

// AdmissionResponse. `patch` is the JSON Patch document itself; it is written base64-encoded,
// as Go writes a []byte, with patchType "JSONPatch".
struct AdmissionResponse {
  std::string uid;
  bool allowed = false;
  std::optional<ApiStatus> status;
  std::string patch;
  std::map<std::string, std::string> audit_annotations;
  std::vector<std::string> warnings;
};

struct AdmissionReview {
  std::string api_version;
  std::string kind;
  std::optional<AdmissionRequest> request;
  std::optional<AdmissionResponse> response;
};

// A review as kube-apiserver sends it: apiVersion admission.k8s.io/v1 (v1beta1 has the same
// fields), kind AdmissionReview, a request with a uid. kInvalidArgument naming the field and
// its value otherwise ("request.kind.group: expected a string, got 7").
StatusOr<AdmissionReview> DecodeAdmissionReview(std::string_view json);

// `review` as JSON: apiVersion, kind and response (an answer carries no request, so none is
// written).
std::string EncodeAdmissionReview(const AdmissionReview& review);

}  // namespace qrm::webhook
