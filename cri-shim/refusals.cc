#include "cri-shim/refusals.h"

#include "common/log.h"
#include "common/metrics/metrics.h"

namespace qrm::shim {
namespace {

metrics::Counter& CounterOf(std::string_view method, RefusalReason reason) {
  return metrics::Default().GetCounter(
      "qrm_cri_shim_refused_total",
      "CRI calls the shim refused instead of forwarding, by method and reason",
      {{"method", std::string(ShortMethodName(method))},
       {"reason", std::string(RefusalReasonName(reason))}});
}

}  // namespace

std::string_view RefusalReasonName(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::kNoRequest: return "no_request";
    case RefusalReason::kNoResponse: return "no_response";
    case RefusalReason::kUndecodable: return "undecodable";
    case RefusalReason::kAdmission: return "admission";
    case RefusalReason::kInternal: return "internal";
  }
  return "unknown";
}

std::string_view ShortMethodName(std::string_view full_name) {
  const size_t slash = full_name.rfind('/');
  return slash == std::string_view::npos ? full_name : full_name.substr(slash + 1);
}

grpc::Status Refused(std::string_view method, RefusalReason reason, const std::string& pod,
                     grpc::Status status) {
  CounterOf(method, reason).Inc();
  const auto level =
      reason == RefusalReason::kNoRequest ? spdlog::level::debug : spdlog::level::warn;
  Logger("cri-shim")
      ->log(level, "{}{}{} refused ({}): {}", pod, pod.empty() ? "" : ": ", ShortMethodName(method),
            RefusalReasonName(reason), status.error_message());
  return status;
}

void CountRefusal(std::string_view method, RefusalReason reason) {
  CounterOf(method, reason).Inc();
}

double RefusedCount(std::string_view method, RefusalReason reason) {
  return CounterOf(method, reason).Value();
}

}  // namespace qrm::shim
