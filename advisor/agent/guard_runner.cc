#include "advisor/agent/guard_runner.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "advisor/agent/guard_counters.h"

namespace qrm::advisor {
namespace {

// Why the round throttles: the fired ensurances with their usage and watermark.
std::string Reason(const guard::GuardDecision& decision) {
  std::string out;
  for (const guard::EnsuranceReport& e : decision.ensurances) {
    if (!e.fired || e.preview) continue;
    if (!out.empty()) out += "; ";
    out +=
        fmt::format("{}: {} {:.3g} > {:.3g}", e.name, e.metric, e.usage.value_or(0), e.watermark);
  }
  return out.empty() ? "held by the guard" : out;
}

std::string Cores(std::optional<double> v) {
  return v ? fmt::format("{:.3f}", *v) : std::string("none");
}

std::string QuotaText(const guard::QuotaChange& c) {
  return fmt::format("quota {} -> {} cores (releases {:.3f})", Cores(c.from), Cores(c.to),
                     c.released);
}

const char* ModeText(guard::EvictMode mode) {
  switch (mode) {
    case guard::EvictMode::kApi: return "api";
    case guard::EvictMode::kCri: return "cri";
    default: return "dry-run";
  }
}

// Walks nothing: previews never reach it.
class NoEvictor : public guard::Evictor {
 public:
  guard::EvictOutcome Evict(const guard::GuardCandidate&) override {
    return guard::EvictOutcome::kError;
  }
};

}  // namespace

std::vector<int64_t> SplitQuota(const GuardedPod& pod, double cores, int64_t period_us) {
  const size_t n = pod.containers.size();
  double used = 0;
  for (const GuardedContainer& c : pod.containers) used += std::max(c.cpu.value_or(0), 0.0);
  // The containers that use the CPU give it up: one using under a tenth of the pod's usage
  // (a sidecar, an idle main) is left unthrottled rather than held at nearly nothing.
  std::vector<double> weight(n, 0);
  double total_weight = 0;
  for (size_t i = 0; i < n; ++i) {
    const double cpu = std::max(pod.containers[i].cpu.value_or(0), 0.0);
    weight[i] = used > 0 ? (cpu >= kThrottledShare * used ? cpu : 0) : 1;  // unsampled: equal
    total_weight += weight[i];
  }
  std::vector<int64_t> out(n, 0);
  const double total_us = cores * static_cast<double>(period_us);
  for (size_t i = 0; i < n && total_weight > 0; ++i) {
    if (weight[i] == 0) continue;
    const GuardedContainer& c = pod.containers[i];
    int64_t quota = std::llround(total_us * weight[i] / total_weight);
    // Never above the container's own limit: a throttle only ever takes CPU away.
    if (c.quota_us > 0 && c.period_us > 0) {
      quota = std::min<int64_t>(quota, c.quota_us * period_us / c.period_us);
    }
    out[i] = std::max<int64_t>(kMinQuotaUs, quota);
  }
  return out;
}

GuardRunner::GuardRunner(GuardRunnerOptions options, std::unique_ptr<ThrottleTarget> host,
                         Evictors evictors)
    : options_(std::move(options)),
      host_(std::move(host)),
      evictors_(std::move(evictors)),
      policy_(options_.policy_file),
      log_(Logger("guard")) {}

Status GuardRunner::Start() {
  QRM_RETURN_IF_ERROR(policy_.Load());
  log_->info("policy {}: {} ensurance(s), eviction mode {}", options_.policy_file,
             policy_.policy().ensurances.size(), ModeText(policy_.policy().eviction.mode));
  return Status::Ok();
}

void GuardRunner::Reload() {
  guard::PolicyReload reload = policy_.Reload();
  if (reload.result == guard::ReloadResult::kApplied) {
    policy_error_.clear();
    log_->info("policy {}: reloaded, {} ensurance(s), eviction mode {}", options_.policy_file,
               policy_.policy().ensurances.size(), ModeText(policy_.policy().eviction.mode));
  } else if (reload.result == guard::ReloadResult::kRejected) {
    policy_error_ = reload.error.message();
    log_->error("{}", policy_error_);
    CountPolicyRejected();
  }
}

void GuardRunner::Round(const Agent& agent, int64_t now) {
  Reload();
  GuardInput input =
      agent.Read([now](const AgentState& s, auto&&...) { return BuildGuardInput(s, now); });
  if (!recovered_) Recover(input);
  if (!recovered_) {  // nothing is decided before the throttles qrm-host holds are known
    Publish(guard::GuardDecision{}, now);
    return;
  }
  ApplyOwnLimits(input);
  guard::GuardDecision decision =
      guard::DecideRound(policy_.policy(), input.round, state_, options_.timings);
  for (const std::string& metric : decision.newly_missing_metrics) {
    log_->warn("metric {}: no fresh node sample; its ensurances neither act nor count", metric);
  }
  CountMissing(decision.missing_metrics);
  const std::string reason = Reason(decision);
  for (const guard::QuotaChange& c : decision.quota_changes) {
    CountQuotaChange(c);
    const bool down = c.to && (!c.from || *c.to < *c.from);
    Remember(now, c.pod, !c.to ? "release" : (down ? "throttle" : "restore"),
             down ? QuotaText(c) + " for " + reason : QuotaText(c));
  }
  for (const guard::QuotaChange& c : decision.preview_quota_changes) {
    Remember(now, c.pod, "would-throttle", QuotaText(c));
  }
  Sync(input, now, reason);
  Evict(decision, now);
  Publish(decision, now);
}

void GuardRunner::Recover(GuardInput& input) {
  if (input.pods.empty()) return;  // no inventory yet: the pods are unknown
  auto listed = host_->List();
  if (!listed.ok()) {
    log_->warn("cannot list the throttles qrm-host holds for the guard, retrying: {}",
               listed.status().message());
    return;
  }
  recovered_ = true;
  std::map<std::string, std::string> key_of_uid;
  for (const auto& [key, pod] : input.pods) key_of_uid[pod.uid] = key;
  std::map<std::string, int64_t> since;
  for (const auto& t : *listed) {
    own_limits_[t.pod_uid() + "/" + t.container()] = {t.restore_quota_us(), t.restore_period_us()};
    if (t.state() == "restoring") continue;  // cleared or expired: qrm-host is giving it back
    auto key = key_of_uid.find(t.pod_uid());
    if (key == key_of_uid.end()) {
      (void)host_->Clear(t.pod_uid(), t.container());  // its pod is gone
      continue;
    }
    Held& held = held_[key->second];
    held.uid = t.pod_uid();
    held.cores += static_cast<double>(t.quota_us()) / static_cast<double>(t.period_us());
    held.quota_us[t.container()] = t.quota_us();
    auto [it, fresh] = since.try_emplace(key->second, t.since_unix());
    if (!fresh) it->second = std::min(it->second, t.since_unix());
  }
  // Oldest first, so restore (newest first) keeps the order it had before the restart.
  std::vector<std::pair<int64_t, std::string>> order;
  order.reserve(since.size());
  for (const auto& [key, first] : since) order.emplace_back(first, key);
  std::sort(order.begin(), order.end());
  const double capacity = input.round.capacity.contains(std::string(guard::kCpuTotalUsage))
                              ? input.round.capacity.at(std::string(guard::kCpuTotalUsage))
                              : 0;
  ApplyOwnLimits(input);  // the ceilings below come from the containers' own limits
  for (const auto& [first, key] : order) {
    const Held& held = held_.at(key);
    guard::ThrottledPod& tp = state_.throttled[key];
    for (const guard::GuardPod& p : input.round.pods) {
      if (p.candidate.Key() == key) tp.pod = p.candidate;
    }
    tp.quota = held.cores;
    // The usage it had when first throttled is not kept: without a limit it is restored up to
    // the node's size (in steps, within the room, as always).
    tp.ceiling = std::max(tp.pod.cpu_limit.value_or(capacity), held.cores);
    tp.sequence = state_.sequence++;
    log_->info("pod={}: taking back its throttle of {:.3f} cores from qrm-host", key, held.cores);
  }
}

void GuardRunner::Sync(const GuardInput& input, int64_t now, const std::string& reason) {
  for (auto it = held_.begin(); it != held_.end();) {
    if (state_.throttled.contains(it->first)) {
      ++it;
      continue;
    }
    ReleasePod(it->first, it->second);
    it = held_.erase(it);
  }
  for (const auto& [key, tp] : state_.throttled) {
    auto pod = input.pods.find(key);
    if (pod == input.pods.end()) continue;  // the round forgets pods that are gone
    Held& held = held_[key];
    const bool changed = std::abs(held.cores - tp.quota) > 1e-9 || held.quota_us.empty();
    if (!changed && now < held.renew_at) continue;
    if (changed || held.uid != pod->second.uid) Resplit(pod->second, tp.quota, held);
    held.renew_at = SetPod(pod->second, held, reason) ? now + options_.lease_s / 2 : 0;
  }
}

void GuardRunner::Resplit(const GuardedPod& pod, double cores, Held& held) {
  Held previous = held;
  held.uid = pod.uid;
  held.cores = cores;
  held.quota_us.clear();
  const auto split = SplitQuota(pod, cores, options_.period_us);
  for (size_t i = 0; i < split.size(); ++i) {
    if (split[i] > 0) held.quota_us[pod.containers[i].name] = split[i];
  }
  // A container that no longer gets a part (it went quiet, or left) is given back now.
  std::erase_if(previous.quota_us, [&](const auto& c) {
    return previous.uid == held.uid && held.quota_us.contains(c.first);
  });
  ReleasePod(pod.uid + " (re-split)", previous);
}

void GuardRunner::ApplyOwnLimits(GuardInput& input) const {
  for (auto& [key, pod] : input.pods) {
    bool all_limited = !pod.containers.empty(), known = false;
    double limit = 0;
    for (GuardedContainer& c : pod.containers) {
      // The runtime shows qrm-host's throttle as the container's quota once one is held: the
      // container's own limit is what qrm-host keeps to give back.
      if (auto own = own_limits_.find(pod.uid + "/" + c.name); own != own_limits_.end()) {
        c.quota_us = own->second.first;
        c.period_us = own->second.second;
        known = true;
      }
      all_limited = all_limited && c.quota_us > 0 && c.period_us > 0;
      if (c.quota_us > 0 && c.period_us > 0) {
        limit += static_cast<double>(c.quota_us) / static_cast<double>(c.period_us);
      }
    }
    if (!known) continue;
    for (guard::GuardPod& p : input.round.pods) {
      if (p.candidate.Key() != key) continue;
      p.candidate.cpu_limit = all_limited ? std::optional<double>(limit) : std::nullopt;
    }
  }
}

bool GuardRunner::SetPod(const GuardedPod& pod, const Held& held, const std::string& reason) {
  bool ok = true;
  for (const GuardedContainer& c : pod.containers) {
    auto quota = held.quota_us.find(c.name);
    if (quota == held.quota_us.end()) continue;
    ContainerThrottle t;
    t.pod_uid = pod.uid;
    t.container = c.name;
    t.quota_us = quota->second;
    t.period_us = options_.period_us;
    // Its own limit comes back at the end (qrm-host keeps the first call's values).
    t.restore_quota_us = c.quota_us > 0 ? c.quota_us : -1;
    t.restore_period_us = c.quota_us > 0 && c.period_us > 0 ? c.period_us : 100000;
    t.lease_s = options_.lease_s;
    t.reason = reason;
    auto answer = host_->Set(t);
    if (answer.ok()) {
      own_limits_[pod.uid + "/" + c.name] = {answer->restore_quota_us(),
                                             answer->restore_period_us()};
    } else {
      ok = false;
      CountThrottleError();
      log_->error("pod={} container={}: throttle to {} us per {} us failed, retrying: {}", pod.uid,
                  c.name, t.quota_us, t.period_us, answer.status().message());
    }
  }
  return ok;
}

void GuardRunner::ReleasePod(const std::string& key, const Held& held) {
  for (const auto& [container, quota] : held.quota_us) {
    own_limits_.erase(held.uid + "/" + container);
    if (Status s = host_->Clear(held.uid, container); !s.ok()) {
      // Not renewed any more: qrm-host restores it when the lease runs out.
      CountThrottleError();
      log_->warn("pod={} uid={} container={}: release failed (its lease will end it): {}", key,
                 held.uid, container, s.message());
    }
  }
}

void GuardRunner::Evict(const guard::GuardDecision& decision, int64_t now) {
  if (decision.evictions.empty()) {
    last_previews_.clear();
    return;
  }
  std::vector<guard::EvictionPlan> plans = decision.evictions;
  const guard::EvictMode mode = policy_.policy().eviction.mode;
  auto evictor = evictors_.find(mode);
  const bool usable = evictor != evictors_.end() && evictor->second != nullptr;
  if (mode != guard::EvictMode::kDryRun && !usable && !said_no_evictor_) {
    log_->error(
        "eviction mode {}: this daemon has no evictor for it (see its start-up log); "
        "evictions are only logged",
        ModeText(mode));
    said_no_evictor_ = true;
  }
  for (guard::EvictionPlan& plan : plans) plan.preview = plan.preview || !usable;
  NoEvictor none;
  if (usable) evictor->second->SetGracePeriod(policy_.policy().eviction.grace_period_s);
  const guard::EvictionReport report = guard::RunEvictionWalk(
      plans, usable ? *evictor->second : none, state_, now, options_.timings);
  std::vector<std::string> previews;
  for (const guard::EvictionAttempt& a : report.attempts) {
    CountEviction(a);
    if (a.preview) {
      previews.push_back(a.pod);
      continue;
    }
    Remember(now, a.pod, "evict",
             fmt::format("{} for {} (releases {:.3g})", guard::EvictOutcomeName(a.outcome),
                         a.metric, a.released));
  }
  // A dry run repeats its plan every round while usage stays up: said when it changes.
  if (previews != last_previews_) {
    for (const guard::EvictionAttempt& a : report.attempts) {
      if (a.preview) Remember(now, a.pod, "would-evict", fmt::format("for {}", a.metric));
    }
    last_previews_ = std::move(previews);
  }
}

void GuardRunner::Remember(int64_t now, const std::string& pod, std::string action,
                           std::string detail) {
  log_->info("pod={}: {} {}", pod, action, detail);
  recent_.push_back({now, pod, std::move(action), std::move(detail)});
  while (recent_.size() > options_.remembered_actions) recent_.pop_front();
}

void GuardRunner::Publish(const guard::GuardDecision& decision, int64_t now) {
  ExportRound(decision, state_.throttled.size());
  MutexLock lock(mu_);
  snapshot_.policy_file = options_.policy_file;
  snapshot_.policy_error = policy_error_;
  snapshot_.eviction_mode = ModeText(policy_.policy().eviction.mode);
  snapshot_.last_round = now;
  snapshot_.ensurances = decision.ensurances;
  snapshot_.throttled = state_.throttled;
  snapshot_.missing_metrics = decision.missing_metrics;
  snapshot_.recent = recent_;
}

GuardSnapshot GuardRunner::Snapshot() const {
  MutexLock lock(mu_);
  return snapshot_;
}

}  // namespace qrm::advisor
