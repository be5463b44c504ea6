#include "cluster/kube/eviction.h"

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/kube/kube_names.h"
#include "common/log.h"

namespace qrm::kube {
namespace {

EvictionResult Result(EvictionOutcome outcome, int code, std::string message) {
  return {outcome, code, std::move(message)};
}

// The message of a Status answer, its causes after it; the whole answer when the body is
// not a Status.
std::string ServerMessage(const KubeResponse& response) {
  const std::optional<ApiStatus> status = ParseApiStatus(response.body);
  if (!status) return DescribeAnswer(response);
  std::string text = status->message;
  for (const std::string& cause : status->causes) text += fmt::format(" ({})", cause);
  return text;
}

EvictionResult Classify(const KubeClient& client, const std::string& path,
                        const KubeResponse& response) {
  switch (response.code) {
    case 200:
    case 201: return Result(EvictionOutcome::kEvicted, response.code, ServerMessage(response));
    case 429:
      return Result(EvictionOutcome::kBlockedByBudget, response.code, ServerMessage(response));
    case 404: return Result(EvictionOutcome::kGone, response.code, ServerMessage(response));
    default:
      return Result(EvictionOutcome::kError, response.code,
                    ApiError("POST", client.UrlOf(path), response).message());
  }
}

}  // namespace

std::string_view EvictionOutcomeName(EvictionOutcome outcome) {
  switch (outcome) {
    case EvictionOutcome::kEvicted: return "evicted";
    case EvictionOutcome::kBlockedByBudget: return "blocked by a disruption budget";
    case EvictionOutcome::kGone: return "gone";
    case EvictionOutcome::kError: return "error";
  }
  return "?";
}

std::string EvictionBody(std::string_view pod_namespace, std::string_view name,
                         const EvictOptions& options) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  const auto str = [&](std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  w.Key("apiVersion");
  str("policy/v1");
  w.Key("kind");
  str("Eviction");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  str(name);
  w.Key("namespace");
  str(pod_namespace);
  w.EndObject();
  if (options.grace_period_seconds || options.dry_run) {
    w.Key("deleteOptions");
    w.StartObject();
    if (options.grace_period_seconds) {
      w.Key("gracePeriodSeconds");
      w.Int64(*options.grace_period_seconds);
    }
    if (options.dry_run) {
      w.Key("dryRun");
      w.StartArray();
      str("All");
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

EvictionResult EvictPod(const KubeClient& client, std::string_view pod_namespace,
                        std::string_view name, const EvictOptions& options) {
  const auto log = Logger("kube");
  Status valid = ValidateNamespace(pod_namespace, "pod namespace");
  if (valid.ok()) valid = ValidateObjectName(name, "pod name");
  if (valid.ok() && options.grace_period_seconds && *options.grace_period_seconds < 0) {
    valid = InvalidArgumentError(
        fmt::format("grace period {} s: must be 0 or more", *options.grace_period_seconds));
  }
  if (!valid.ok()) {  // the message quotes the names: they may hold anything
    log->error("eviction refused: {}", valid.message());
    return Result(EvictionOutcome::kError, 0, valid.message());
  }
  const std::string pod = fmt::format("pod={}/{}", pod_namespace, name);
  const std::string path =
      fmt::format("/api/v1/namespaces/{}/pods/{}/eviction", pod_namespace, name);
  const StatusOr<KubeResponse> response =
      client.Request("POST", path, EvictionBody(pod_namespace, name, options));
  EvictionResult result = response.ok()
                              ? Classify(client, path, *response)
                              : Result(EvictionOutcome::kError, 0, response.status().ToString());
  const std::string_view dry = options.dry_run ? " (dry run)" : "";
  if (result.outcome == EvictionOutcome::kError) {
    log->error("{}: eviction failed{}: {}", pod, dry, result.message);
  } else {
    log->info("{}: {}{} ({}){}{}", pod, EvictionOutcomeName(result.outcome), dry, result.http_code,
              result.message.empty() ? "" : ": ", result.message);
  }
  return result;
}

}  // namespace qrm::kube
