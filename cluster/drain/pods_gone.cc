#include "cluster/drain/pods_gone.h"

#include <numeric>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/stop_sleep.h"

namespace qrm::cluster::drain {
namespace {

using Clock = std::chrono::steady_clock;

// One round: the pods of `pending` (indexes into `pods`) that have not left yet, each with why.
std::vector<std::pair<size_t, std::string>> StillThere(
    const kube::KubeClient& client, std::string_view node,
    const std::vector<std::pair<std::string, std::string>>& pods,
    const std::vector<size_t>& pending) {
  std::vector<std::pair<size_t, std::string>> still;
  for (const size_t i : pending) {
    const std::string path =
        fmt::format("/api/v1/namespaces/{}/pods/{}", pods[i].first, pods[i].second);
    StatusOr<kube::KubeResponse> got = client.Request("GET", path);
    StatusOr<bool> left =
        got.ok() ? PodLeftNode(*got, node, client.UrlOf(path)) : StatusOr<bool>(got.status());
    if (left.ok() && *left) continue;
    still.emplace_back(i, left.ok() ? "still on the node" : left.status().message());
  }
  return still;
}

}  // namespace

StatusOr<bool> PodLeftNode(const kube::KubeResponse& got, std::string_view node,
                           std::string_view url) {
  if (got.code == 404) return true;
  if (got.code != 200) {
    QRM_RETURN_IF_ERROR(kube::ApiError("GET", url, got));
    return InvalidArgumentError(fmt::format("GET {}: unexpected answer {}", url, got.code));
  }
  rapidjson::Document pod;
  pod.Parse(got.body.data(), got.body.size());
  if (pod.HasParseError() || !pod.IsObject()) {
    return InvalidArgumentError(fmt::format("GET {}: the answer is not a JSON object", url));
  }
  const auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.IsObject()) return true;  // not bound
  const auto bound = spec->value.FindMember("nodeName");
  if (bound == spec->value.MemberEnd() || bound->value.IsNull()) return true;
  if (!bound->value.IsString()) {
    return InvalidArgumentError(fmt::format("GET {}: spec.nodeName is not a string", url));
  }
  return std::string_view(bound->value.GetString(), bound->value.GetStringLength()) != node;
}

PodsGoneResult WaitForPodsGone(const kube::KubeClient& client, std::string_view node,
                               const std::vector<std::pair<std::string, std::string>>& pods,
                               const PodsGoneWait& wait, const std::stop_token& stop) {
  std::vector<size_t> pending(pods.size());
  std::iota(pending.begin(), pending.end(), size_t{0});
  const Clock::time_point deadline = Clock::now() + wait.timeout;
  PodsGoneResult result;
  while (!pending.empty()) {
    result.remaining = StillThere(client, node, pods, pending);
    const Clock::time_point now = Clock::now();
    if (result.remaining.empty() || now >= deadline) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (!SleepUnlessStopped(stop, std::min(wait.poll_interval, left))) {
      result.stopped = true;
      break;
    }
    pending.clear();
    for (const auto& [i, why] : result.remaining) pending.push_back(i);
  }
  return result;
}

}  // namespace qrm::cluster::drain
