#include "cluster/drain/executor.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/drain/pods_gone.h"
#include "cluster/kube/kube_names.h"
#include "common/log.h"
#include "common/stop_sleep.h"

namespace qrm::cluster::drain {
namespace {

using rapidjson::Value;
using Clock = std::chrono::steady_clock;

constexpr char kComponent[] = "drain";
// A node another writer keeps changing (the kubelet's heartbeats go to its status, not here)
// is tried this many times before the cordon is given up.
constexpr int kCordonTries = 5;
constexpr std::string_view kMergePatch = "application/merge-patch+json";

const Value* Member(const Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  const auto it = object.FindMember(name);
  return it == object.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

bool StringIs(const Value& object, const char* name, std::string_view want) {
  const Value* v = Member(object, name);
  return v != nullptr && v->IsString() && std::string_view(v->GetString()) == want;
}

bool HasDrainTaint(const Value* taints, std::string_view key) {
  if (taints == nullptr) return false;
  return std::any_of(taints->Begin(), taints->End(), [&](const Value& t) {
    return StringIs(t, "key", key) && StringIs(t, "effect", "NoSchedule");
  });
}

// {"metadata":{"resourceVersion":rv},"spec":{"unschedulable":true,"taints":[...]}}: a merge
// patch replaces a list whole, so the existing taints are written out again before ours.
std::string PatchBody(std::string_view resource_version, const Value* taints, bool add_taint,
                      std::string_view taint_key) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  const auto str = [&](std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.Key("resourceVersion");
  str(resource_version);
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("unschedulable");
  w.Bool(true);
  w.Key("taints");
  w.StartArray();
  if (taints != nullptr) {
    for (const Value& t : taints->GetArray()) t.Accept(w);
  }
  if (add_taint) {
    w.StartObject();
    w.Key("key");
    str(taint_key);
    w.Key("value");
    str(kDrainTaintValue);
    w.Key("effect");
    str("NoSchedule");
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Whether trying the eviction again can give another answer: a budget allows it later, a
// server error or a lost connection passes; a refused request (400, 403, ...) stays refused.
bool Retryable(const kube::EvictionResult& result) {
  switch (result.outcome) {
    case kube::EvictionOutcome::kBlockedByBudget: return true;
    case kube::EvictionOutcome::kError: return result.http_code == 0 || result.http_code >= 500;
    default: return false;
  }
}

bool Done(kube::EvictionOutcome outcome) {
  return outcome == kube::EvictionOutcome::kEvicted || outcome == kube::EvictionOutcome::kGone;
}

// The pods' reports, names checked: a bad name is never sent and never tried again.
std::vector<PodEvictionReport> InitialReports(const DrainTarget& target,
                                              std::vector<size_t>& pending) {
  std::vector<PodEvictionReport> reports;
  for (const auto& [pod_namespace, name] : target.pods) {
    PodEvictionReport r{.pod = fmt::format("{}/{}", pod_namespace, name)};
    Status valid = kube::ValidateNamespace(pod_namespace, "pod namespace");
    if (valid.ok()) valid = kube::ValidateObjectName(name, "pod name");
    if (valid.ok()) {
      pending.push_back(reports.size());
    } else {
      r.message = valid.message();
    }
    reports.push_back(std::move(r));
  }
  return reports;
}

// One round: every pending pod tried once; returns those to try again.
std::vector<size_t> EvictRound(const kube::KubeClient& client, const DrainTarget& target,
                               const ExecuteOptions& options, const std::vector<size_t>& pending,
                               std::vector<PodEvictionReport>& reports,
                               const std::stop_token& stop) {
  std::vector<size_t> again;
  for (const size_t i : pending) {
    if (stop.stop_requested()) {
      again.push_back(i);
      continue;
    }
    const auto& [pod_namespace, name] = target.pods[i];
    const kube::EvictionResult result = kube::EvictPod(
        client, pod_namespace, name,
        {.grace_period_seconds = options.grace_period_seconds, .dry_run = options.dry_run});
    PodEvictionReport& r = reports[i];
    ++r.attempts;
    r.outcome = result.outcome;
    r.message = result.message;
    if (Retryable(result)) again.push_back(i);
  }
  return again;
}

void LogPod(const std::string& node, const PodEvictionReport& r) {
  const auto log = Logger(kComponent);
  if (Done(r.outcome)) {
    log->info("node={} pod={}: {} after {} tries", node, r.pod,
              kube::EvictionOutcomeName(r.outcome), r.attempts);
  } else {
    log->warn("node={} pod={}: not evicted after {} tries: {}: {}", node, r.pod, r.attempts,
              kube::EvictionOutcomeName(r.outcome), r.message);
  }
}

// Why the node is incomplete: its pods that were not evicted.
std::string Unevicted(const NodeExecution& n, const ExecuteOptions& options, bool stopped) {
  std::string pods;
  int count = 0;
  for (const PodEvictionReport& r : n.pods) {
    if (Done(r.outcome)) continue;
    ++count;
    const std::string_view why = r.attempts > 0      ? kube::EvictionOutcomeName(r.outcome)
                                 : r.message.empty() ? "not tried"
                                                     : std::string_view(r.message);
    pods += fmt::format("{}{} ({})", pods.empty() ? "" : ", ", r.pod, why);
  }
  const std::string why =
      stopped ? "stopped" : fmt::format("within {} ms", options.eviction_timeout.count());
  return fmt::format("{} of {} pods not evicted {}: {}", count, n.pods.size(), why, pods);
}

// Evicts the node's pods, a round of tries every retry_interval until each is done, cannot
// be done, or the node's eviction_timeout passed.
void EvictPods(const kube::KubeClient& client, const DrainTarget& target,
               const ExecuteOptions& options, const std::stop_token& stop, NodeExecution& out) {
  std::vector<size_t> pending;
  out.pods = InitialReports(target, pending);
  const Clock::time_point deadline = Clock::now() + options.eviction_timeout;
  while (!pending.empty()) {
    pending = EvictRound(client, target, options, pending, out.pods, stop);
    const Clock::time_point now = Clock::now();
    if (pending.empty() || now >= deadline) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    if (!SleepUnlessStopped(stop, std::min(options.retry_interval, left))) break;
  }
  for (const PodEvictionReport& r : out.pods) LogPod(out.node, r);
  out.complete = std::all_of(out.pods.begin(), out.pods.end(),
                             [](const PodEvictionReport& r) { return Done(r.outcome); });
  if (!out.complete) out.error = Unevicted(out, options, stop.stop_requested());
}

// Whether a drain waits for its evicted pods to leave the node (step 3 of executor.h): never in
// a dry run, where nothing is deleted.
bool WaitsForPods(const ExecuteOptions& options) {
  return !options.dry_run && options.termination_timeout.count() > 0;
}

// Waits for the evicted pods to leave the node (step 3 of executor.h); the node stays
// complete only if they all did.
void WaitForEvictedPods(const kube::KubeClient& client, const DrainTarget& target,
                        const ExecuteOptions& options, const std::stop_token& stop,
                        NodeExecution& out) {
  for (PodEvictionReport& r : out.pods) r.left_node = r.outcome == kube::EvictionOutcome::kGone;
  if (!WaitsForPods(options)) return;
  std::vector<std::pair<std::string, std::string>> evicted;
  std::vector<PodEvictionReport*> reports;  // of `evicted`, in the same order
  for (size_t i = 0; i < out.pods.size(); ++i) {
    if (out.pods[i].left_node) continue;
    evicted.push_back(target.pods[i]);
    reports.push_back(&out.pods[i]);
  }
  const PodsGoneResult waited = WaitForPodsGone(
      client, target.node, evicted,
      {.poll_interval = options.retry_interval, .timeout = options.termination_timeout}, stop);
  for (PodEvictionReport* r : reports) r->left_node = true;
  if (waited.remaining.empty()) return;
  std::string pods;
  for (const auto& [i, why] : waited.remaining) {
    reports[i]->left_node = false;
    pods += fmt::format("{}{} ({})", pods.empty() ? "" : ", ", reports[i]->pod, why);
  }
  out.complete = false;
  out.error =
      fmt::format("{} of {} evicted pods not gone from the node {}: {}", waited.remaining.size(),
                  evicted.size(),
                  waited.stopped ? std::string("(stopped)")
                                 : fmt::format("within {} ms", options.termination_timeout.count()),
                  pods);
}

NodeExecution DrainNode(const kube::KubeClient& client, const DrainTarget& target,
                        const ExecuteOptions& options, const std::stop_token& stop) {
  const auto log = Logger(kComponent);
  NodeExecution out{.node = target.node};
  if (stop.stop_requested()) {
    out.error = "stopped before the node was started";
    log->warn("node={}: {}", out.node, out.error);
    return out;
  }
  const std::string_view dry = options.dry_run ? " (dry run)" : "";
  if (Status cordon = CordonNode(client, target.node, options.taint_key, options.dry_run);
      !cordon.ok()) {
    out.error = "cordon failed: " + cordon.message();
    log->error("node={}: {}{}, no pod evicted", out.node, out.error, dry);
    return out;
  }
  out.cordoned = !options.dry_run;
  EvictPods(client, target, options, stop, out);
  if (out.complete) WaitForEvictedPods(client, target, options, stop, out);
  if (out.complete) {
    log->info("node={}: drained{}: {} pods evicted{}", out.node, dry, out.pods.size(),
              WaitsForPods(options) ? " and gone from the node" : " or gone");
  } else {
    log->warn("node={}: incomplete{}: {}", out.node, dry, out.error);
  }
  return out;
}

}  // namespace

bool ExecuteReport::complete() const {
  return std::all_of(nodes.begin(), nodes.end(), [](const NodeExecution& n) { return n.complete; });
}

StatusOr<std::optional<std::string>> CordonPatch(std::string_view node_json,
                                                 std::string_view taint_key) {
  rapidjson::Document doc;
  doc.Parse(node_json.data(), node_json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("node: not a JSON object");
  }
  const Value* meta = Member(doc, "metadata");
  const Value* version = meta != nullptr ? Member(*meta, "resourceVersion") : nullptr;
  if (version == nullptr || !version->IsString() || version->GetStringLength() == 0) {
    return InvalidArgumentError("node: metadata.resourceVersion: missing");
  }
  const Value* spec = Member(doc, "spec");
  const Value* taints = spec != nullptr ? Member(*spec, "taints") : nullptr;
  if (taints != nullptr && !taints->IsArray()) {
    return InvalidArgumentError("node: spec.taints: not a list");
  }
  const Value* unschedulable = spec != nullptr ? Member(*spec, "unschedulable") : nullptr;
  const bool cordoned =
      unschedulable != nullptr && unschedulable->IsBool() && unschedulable->GetBool();
  const bool tainted = HasDrainTaint(taints, taint_key);
  if (cordoned && tainted) return std::optional<std::string>();
  return std::optional<std::string>(
      PatchBody(std::string_view(version->GetString(), version->GetStringLength()), taints,
                !tainted, taint_key));
}

Status CordonNode(const kube::KubeClient& client, std::string_view node, std::string_view taint_key,
                  bool dry_run) {
  QRM_RETURN_IF_ERROR(kube::ValidateObjectName(node, "node name"));
  const std::string path = fmt::format("/api/v1/nodes/{}", node);
  for (int attempt = 1;; ++attempt) {
    QRM_ASSIGN_OR_RETURN(const kube::KubeResponse got, client.Request("GET", path));
    QRM_RETURN_IF_ERROR(kube::ApiError("GET", client.UrlOf(path), got));
    StatusOr<std::optional<std::string>> patch = CordonPatch(got.body, taint_key);
    if (!patch.ok()) return patch.status().WithContext("GET " + client.UrlOf(path));
    if (dry_run || !*patch) {
      Logger(kComponent)
          ->info("node={}: {}", node, !*patch ? "cordoned already" : "would be cordoned (dry run)");
      return Status::Ok();
    }
    QRM_ASSIGN_OR_RETURN(const kube::KubeResponse patched,
                         client.Request("PATCH", path, **patch, kMergePatch));
    if (patched.code == 409 && attempt < kCordonTries) {  // changed since read: read again
      Logger(kComponent)->info("node={}: changed while cordoning, reading it again", node);
      continue;
    }
    QRM_RETURN_IF_ERROR(kube::ApiError("PATCH", client.UrlOf(path), patched));
    Logger(kComponent)
        ->info("node={}: cordoned (taint {}={}:NoSchedule)", node, taint_key, kDrainTaintValue);
    return Status::Ok();
  }
}

ExecuteReport ExecuteDrains(const kube::KubeClient& client, const std::vector<DrainTarget>& targets,
                            const ExecuteOptions& options, std::stop_token stop) {
  ExecuteReport report;
  report.nodes.resize(targets.size());
  // Workers take the next target in order; each writes only its own target's entry.
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < targets.size(); i = next++) {
      report.nodes[i] = DrainNode(client, targets[i], options, stop);
    }
  };
  const size_t workers =
      std::min(targets.size(), static_cast<size_t>(std::max(1, options.parallelism)));
  {
    std::vector<std::jthread> threads;
    for (size_t w = 0; w < workers; ++w) threads.emplace_back(work);
  }  // joined here
  const auto complete = std::count_if(report.nodes.begin(), report.nodes.end(),
                                      [](const NodeExecution& n) { return n.complete; });
  Logger(kComponent)
      ->info("drains{}: {} of {} nodes complete", options.dry_run ? " (dry run)" : "", complete,
             report.nodes.size());
  return report;
}

}  // namespace qrm::cluster::drain
