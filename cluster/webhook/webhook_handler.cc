#include "cluster/webhook/webhook_handler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cluster/webhook/admission_review.h"
#include "cluster/webhook/pod_mutator.h"
#include "common/log.h"

namespace qrm::webhook {
namespace {

constexpr const char* kJson = "application/json";

// Statuses as controller-runtime's admission helpers write them: Denied is 403 Forbidden,
// Errored(400) a BadRequest; kube-apiserver raises anything below 400 to 400.
ApiStatus Forbidden(std::string message) {
  return ApiStatus{"Failure", std::move(message), "Forbidden", 403};
}
ApiStatus BadRequest(std::string message) {
  return ApiStatus{"Failure", std::move(message), "BadRequest", 400};
}

bool IsPodCreate(const AdmissionRequest& r) {
  return r.resource.group.empty() && r.resource.resource == "pods" && r.sub_resource.empty() &&
         r.operation == "CREATE";
}

std::string PodName(const AdmissionRequest& r) {
  return fmt::format("{}/{}", r.namespace_, r.name.empty() ? "(generated name)" : r.name);
}

// The decision on a pod create; other requests are allowed untouched (the configuration sends
// only pod creates, but an operator may widen it).
AdmissionResponse Decide(const WebhookConfig& config, const AdmissionRequest& request) {
  AdmissionResponse response;
  response.uid = request.uid;
  if (!IsPodCreate(request)) {
    response.allowed = true;
    return response;
  }
  if (request.object.empty()) {
    response.status = BadRequest("request.object: missing (a pod create carries the pod)");
    return response;
  }
  auto mutation = MutatePod(config, request.object);
  if (!mutation.ok()) {
    response.status = BadRequest("request." + mutation.status().message());
    return response;
  }
  if (mutation->refusal) {
    Logger("webhook")->info("pod {}: refused: {}", PodName(request), *mutation->refusal);
    response.status = Forbidden(*mutation->refusal);
    return response;
  }
  response.allowed = true;
  response.warnings = std::move(mutation->warnings);
  if (!mutation->patch.empty()) {
    response.patch = EncodePatch(mutation->patch);
    response.audit_annotations["written-annotations"] =
        fmt::format("{}", fmt::join(mutation->written, ","));
    Logger("webhook")->info("pod {}: writing {}{}", PodName(request),
                            fmt::join(mutation->written, " "),
                            request.dry_run.value_or(false) ? " (dry run)" : "");
  }
  return response;
}

}  // namespace

http::Response ServeAdmission(const WebhookConfig& config, std::string_view body) {
  auto review = DecodeAdmissionReview(body);
  if (!review.ok()) {
    Logger("webhook")->warn("refused an unreadable AdmissionReview: {}", review.status().message());
    return http::Response{400, "text/plain; charset=utf-8", review.status().message() + "\n"};
  }
  AdmissionReview answer;
  answer.api_version = review->api_version;
  answer.kind = review->kind;
  answer.response = Decide(config, *review->request);
  return http::Response{200, kJson, EncodeAdmissionReview(answer)};
}

std::map<std::string, http::Route> WebhookRoutes(WebhookConfig config) {
  std::map<std::string, http::Route> routes;
  routes[kMutatePodsPath] =
      http::Route{{"POST"}, [config = std::move(config)](const http::Request& request) {
                    return ServeAdmission(config, request.body);
                  }};
  routes["/healthz"] =
      http::Route{{"GET"}, [](const http::Request&) {
                    return http::Response{200, "text/plain; charset=utf-8", "ok\n"};
                  }};
  return routes;
}

}  // namespace qrm::webhook
