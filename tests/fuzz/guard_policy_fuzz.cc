// Fuzzes the watermark guard's policy parser (advisor/guard/guard_policy.h): the policy file
// is written by hand, so the parser meets typos, half-edited files and anything else.
//
// Input: the policy's JSON text. Properties beyond "does not crash":
//  * every error is kInvalidArgument with a message of one short line of printable ASCII
//    (whatever bytes the file held, however large or deep the value it quotes);
//  * an accepted policy keeps every documented range: at least one ensurance, unique non-empty
//    names, a registered metric, a watermark above 0 (a percent at most 100), a margin below a
//    watermark of its kind, no throttling of a metric that cannot be throttled, thresholds,
//    ratios, seconds and pod counts in bounds, skip entries "namespace/name" or "namespace/*";
//  * every skip entry skips the pod it names;
//  * a second parse agrees (the same policy, or the same error).
// (No round trip through written JSON: RapidJSON 1.1's default number parsing is not exact, so
// a value written back may come back an ulp away, across a bound such as margin < watermark.)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "advisor/guard/guard_metrics.h"
#include "advisor/guard/guard_policy.h"

namespace {

using qrm::advisor::guard::CandidateOptions;
using qrm::advisor::guard::EvictionOptions;
using qrm::advisor::guard::GuardAction;
using qrm::advisor::guard::GuardPolicy;
using qrm::advisor::guard::Level;
using qrm::advisor::guard::ObjectiveEnsurance;
using qrm::advisor::guard::ThrottleOptions;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "guard_policy_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

void CheckMessage(const std::string& message) {
  Check(!message.empty(), "an empty message");
  Check(message.size() <= 1024, "a message longer than 1 KiB");
  for (const char c : message) Check(c >= 0x20 && c < 0x7f, "a message byte not printable ASCII");
}

void CheckEnsurance(const ObjectiveEnsurance& e) {
  Check(!e.name.empty(), "an empty name");
  const qrm::advisor::guard::GuardMetric* metric = qrm::advisor::guard::FindMetric(e.metric);
  Check(metric != nullptr, "an unregistered metric");
  const Level& w = e.watermark;
  Check(std::isfinite(w.value) && w.value > 0 && (!w.percent || w.value <= 100),
        "a watermark out of range");
  const Level& m = e.restore_margin;
  Check(std::isfinite(m.value) && m.value >= 0 && (!m.percent || m.value < 100),
        "a margin out of range");
  Check(m.percent != w.percent || m.value < w.value, "a margin not below its watermark");
  Check(metric->throttleable || e.action == GuardAction::kEvict, "throttling a metric that cannot");
  Check(e.avoidance_threshold >= 1 && e.avoidance_threshold <= 1000, "avoidanceThreshold range");
  Check(e.restore_threshold >= 1 && e.restore_threshold <= 1000, "restoreThreshold range");
}

void CheckSkip(const CandidateOptions& c) {
  for (const std::string& entry : c.skip) {
    const size_t slash = entry.find('/');
    Check(slash != std::string::npos && slash > 0 && slash + 1 < entry.size(),
          "a skip entry shape");
    Check(entry.find('/', slash + 1) == std::string::npos, "a skip entry with two slashes");
    for (const char ch : entry) Check(static_cast<unsigned char>(ch) > ' ', "a blank in a skip");
    Check(c.Skipped(entry.substr(0, slash), entry.substr(slash + 1)), "an entry not skipped");
  }
}

void CheckRanges(const GuardPolicy& p) {
  Check(!p.ensurances.empty(), "no ensurance");
  for (size_t i = 0; i < p.ensurances.size(); ++i) {
    CheckEnsurance(p.ensurances[i]);
    for (size_t j = 0; j < i; ++j) {
      Check(p.ensurances[i].name != p.ensurances[j].name, "a duplicate name");
    }
  }
  const ThrottleOptions& t = p.throttle;
  Check(t.step_ratio > 0 && t.step_ratio <= 1, "step_ratio range");
  Check(t.min_cpu_ratio >= 0 && t.min_cpu_ratio <= 1, "min_cpu_ratio range");
  const EvictionOptions& e = p.eviction;
  Check(e.cool_down_s >= 0 && e.cool_down_s <= 86400, "coolDownSeconds range");
  Check(e.max_pods_per_round >= 1 && e.max_pods_per_round <= 1000, "maxPodsPerRound range");
  Check(e.grace_period_s >= 0 && e.grace_period_s <= 3600, "grace period range");
  CheckSkip(p.candidates);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const qrm::StatusOr<GuardPolicy> policy = qrm::advisor::guard::ParseGuardPolicy(text);
  const qrm::StatusOr<GuardPolicy> again = qrm::advisor::guard::ParseGuardPolicy(text);
  if (!policy.ok()) {
    Check(policy.status().code() == qrm::StatusCode::kInvalidArgument,
          "an error that is not kInvalidArgument");
    CheckMessage(policy.status().message());
    Check(!again.ok() && again.status() == policy.status(), "two parses disagree");
    return 0;
  }
  CheckRanges(*policy);
  Check(again.ok() && *again == *policy, "two parses disagree");
  return 0;
}
