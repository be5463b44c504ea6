// The HTTP side of the pod webhook: one AdmissionReview in, one AdmissionReview out
// (docs/webhook.md).
//
// A review that cannot be read is answered 400 with a message naming the field: kube-apiserver
// counts any answer but a 200 with a review as the webhook failing, and then applies the
// webhook's failurePolicy (Ignore: the pod is created unmutated; Fail: it is refused).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "cluster/webhook/webhook_config.h"
#include "common/http/http_server.h"

namespace qrm::webhook {

// The path the MutatingWebhookConfiguration names (examples/deploy/kubernetes/qrm-webhook.yaml).
inline constexpr const char* kMutatePodsPath = "/mutate/pods";

// The answer to one POSTed review: 200 with the response review (allowed with a JSON Patch, or
// refused with a metav1.Status), or 400 when the review is unreadable.
http::Response ServeAdmission(const WebhookConfig& config, std::string_view body);

// The routes to mount on the webhook's HTTPS listener: POST kMutatePodsPath and GET /healthz.
std::map<std::string, http::Route> WebhookRoutes(WebhookConfig config);

}  // namespace qrm::webhook
