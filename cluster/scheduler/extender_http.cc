// ExtenderService: the HTTP side of the verbs, request body in, response out.
//
// Why a bad filter request is answered 200 with Error set rather than 400: kube-scheduler
// (pkg/scheduler/extender.go, HTTPExtender.send) turns any status but 200 into "failed
// <verb> with extender at URL ..., code 400", dropping the body, so the pod's events would not
// say what was wrong; an ExtenderFilterResult whose Error is set fails the scheduling attempt
// the same way (or is ignored, for an `ignorable` extender) and carries the message to the
// pod's events. Go extenders built on k8s.io/kube-scheduler/extender/v1 answer the same way.
// Prioritize has no Error field: kube-scheduler ignores a prioritize error and goes on without
// this extender's scores, so a bad request gets 400 with the message as text, which it logs.
#include <string>

#include "cluster/extender/extender_codec.h"
#include "cluster/scheduler/extender_service.h"
#include "common/log.h"

namespace qrm::cluster::scheduler {
namespace {

constexpr const char* kJson = "application/json";

http::Response Json(std::string body) {
  return http::Response{200, kJson, std::move(body)};
}

}  // namespace

http::Response ExtenderService::HandleFilter(std::string_view body) {
  const metrics::Stopwatch watch;
  StatusOr<extender::ExtenderArgs> args = extender::DecodeExtenderArgs(body);
  if (!args.ok()) {
    metrics_.Request("filter", "bad-request", watch.Seconds());
    input_log_.Log(spdlog::level::warn, "filter: {}", args.status().message());
    extender::ExtenderFilterResult result;
    result.error = args.status().message();
    return Json(extender::EncodeExtenderFilterResult(result));
  }
  return Json(extender::EncodeExtenderFilterResult(Filter(*args)));
}

http::Response ExtenderService::HandlePrioritize(std::string_view body) {
  const metrics::Stopwatch watch;
  StatusOr<extender::ExtenderArgs> args = extender::DecodeExtenderArgs(body);
  if (!args.ok()) {
    metrics_.Request("prioritize", "bad-request", watch.Seconds());
    input_log_.Log(spdlog::level::warn, "prioritize: {}", args.status().message());
    return http::Response{400, "text/plain; charset=utf-8", args.status().message()};
  }
  StatusOr<extender::HostPriorityList> list = Prioritize(*args);
  if (!list.ok()) {
    return http::Response{400, "text/plain; charset=utf-8", list.status().message()};
  }
  return Json(extender::EncodeHostPriorityList(*list));
}

http::Response ExtenderService::HandleBind(std::string_view body, const BindPoster& post) {
  const metrics::Stopwatch watch;
  extender::ExtenderBindingResult result;
  StatusOr<extender::ExtenderBindingArgs> args = extender::DecodeExtenderBindingArgs(body);
  if (!args.ok()) {
    metrics_.Request("bind", "bad-request", watch.Seconds());
    result.error = args.status().message();
    return Json(extender::EncodeExtenderBindingResult(result));
  }
  StatusOr<BindPlan> plan = PlanBind(*args);
  Status status = plan.ok() ? post(*plan) : plan.status();
  if (plan.ok()) FinishBind(*args, status);
  metrics_.Request("bind", status.ok() ? "ok" : "error", watch.Seconds());
  result.error = status.ok() ? "" : status.message();
  return Json(extender::EncodeExtenderBindingResult(result));
}

}  // namespace qrm::cluster::scheduler
