#include "advisor/guard/guard_policy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "advisor/guard/guard_metrics.h"
#include "common/json_string.h"

namespace qrm::advisor::guard {
namespace {

using Json = rapidjson::Value;
using Keys = std::initializer_list<std::string_view>;

// A value quoted in a message is cut here: the message stays one short line however large
// the value, and a deeply nested one is not walked (nor recursed into) to its end.
constexpr size_t kMaxValueText = 120;

// ASCII output escapes whatever bytes the operator wrote, so a message is printable as is.
class BoundedWriter
    : public rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::ASCII<>> {
 public:
  using Base = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::ASCII<>>;
  explicit BoundedWriter(rapidjson::StringBuffer& buffer) : Base(buffer), buffer_(buffer) {}

  // Value::Accept calls these on the static type, so hiding Writer's suffices.
  bool Null() { return Fits(Base::Null()); }
  bool Bool(bool b) { return Fits(Base::Bool(b)); }
  bool Int(int i) { return Fits(Base::Int(i)); }
  bool Uint(unsigned u) { return Fits(Base::Uint(u)); }
  bool Int64(int64_t i) { return Fits(Base::Int64(i)); }
  bool Uint64(uint64_t u) { return Fits(Base::Uint64(u)); }
  bool Double(double d) { return Fits(Base::Double(d)); }
  bool String(const Ch* s, rapidjson::SizeType n, bool copy) {
    return Fits(Base::String(s, n, copy));
  }
  bool Key(const Ch* s, rapidjson::SizeType n, bool copy) { return Fits(Base::Key(s, n, copy)); }
  bool StartObject() { return Fits(Base::StartObject()); }
  bool EndObject(rapidjson::SizeType n) { return Fits(Base::EndObject(n)); }
  bool StartArray() { return Fits(Base::StartArray()); }
  bool EndArray(rapidjson::SizeType n) { return Fits(Base::EndArray(n)); }

 private:
  bool Fits(bool ok) const { return ok && buffer_.GetSize() <= kMaxValueText; }
  rapidjson::StringBuffer& buffer_;
};

// A value as the operator wrote it (as JSON text), for messages.
std::string Text(const Json& v) {
  rapidjson::StringBuffer buffer;
  BoundedWriter writer(buffer);
  const bool whole = v.Accept(writer);
  std::string text;
  for (const char c :
       std::string_view(buffer.GetString(), std::min(buffer.GetSize(), kMaxValueText))) {
    // JSON leaves DEL unescaped; a message escapes it like the other control bytes.
    if (c == '\x7f') {
      text += "\\u007F";
    } else {
      text += c;
    }
  }
  return whole ? text : text + "...";
}

std::string Join(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

Status Invalid(std::string_view path, const Json& v, std::string_view expected) {
  return InvalidArgumentError(fmt::format("{}: invalid value {} ({})", path, Text(v), expected));
}

Status Missing(std::string_view path, std::string_view expected) {
  return InvalidArgumentError(fmt::format("{}: missing ({})", path, expected));
}

const Json* Find(const Json& object, const char* key) {
  const auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

// Refused rather than ignored: a misspelt key would leave its default silently in force, and
// of a key written twice only one would be.
Status CheckKeys(const Json& object, std::string_view path, Keys known) {
  const std::string where = path.empty() ? "guard policy" : std::string(path);
  for (auto m = object.MemberBegin(); m != object.MemberEnd(); ++m) {
    const std::string_view key = JsonStringView(m->name);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return InvalidArgumentError(fmt::format("{}: unknown key {} (known: {})", where,
                                              Text(m->name), fmt::join(known, ", ")));
    }
    for (auto earlier = object.MemberBegin(); earlier != m; ++earlier) {
      if (JsonStringView(earlier->name) == key) {
        return InvalidArgumentError(fmt::format("{}: key {} written twice", where, Text(m->name)));
      }
    }
  }
  return Status::Ok();
}

// The object under `key`, nullptr when the key is absent.
StatusOr<const Json*> GetSection(const Json& parent, const char* key, Keys known) {
  const Json* v = Find(parent, key);
  if (v == nullptr) return v;
  if (!v->IsObject()) return Invalid(key, *v, "an object");
  QRM_RETURN_IF_ERROR(CheckKeys(*v, key, known));
  return v;
}

Status GetBool(const Json& object, std::string_view path, const char* key, bool& out) {
  const Json* v = Find(object, key);
  if (v == nullptr) return Status::Ok();
  if (!v->IsBool()) return Invalid(Join(path, key), *v, "true or false");
  out = v->GetBool();
  return Status::Ok();
}

template <typename T>
Status GetInt(const Json& object, std::string_view path, const char* key, int64_t lo, int64_t hi,
              T& out) {
  const Json* v = Find(object, key);
  if (v == nullptr) return Status::Ok();
  if (!v->IsInt64() || v->GetInt64() < lo || v->GetInt64() > hi) {
    return Invalid(Join(path, key), *v, fmt::format("a whole number from {} to {}", lo, hi));
  }
  out = static_cast<T>(v->GetInt64());
  return Status::Ok();
}

// A percent of a pod's CPU limit, kept as a share of it. The share is what is checked: a
// percent so small that its share rounds to 0 would be a step that never moves a quota.
Status GetPercentShare(const Json& object, std::string_view path, const char* key, bool zero_ok,
                       double& out) {
  const Json* v = Find(object, key);
  if (v == nullptr) return Status::Ok();
  const double share = v->IsNumber() ? v->GetDouble() / 100 : -1;
  if (share < 0 || share > 1 || (share == 0 && !zero_ok)) {
    return Invalid(Join(path, key), *v,
                   zero_ok ? "a number from 0 to 100" : "a number above 0 and at most 100");
  }
  out = share;
  return Status::Ok();
}

template <typename E>
struct Choice {
  std::string_view text;
  E value;
};

constexpr Choice<GuardAction> kActions[] = {{"throttle", GuardAction::kThrottle},
                                            {"evict", GuardAction::kEvict},
                                            {"throttle-evict", GuardAction::kThrottleThenEvict}};
constexpr Choice<Strategy> kStrategies[] = {{"None", Strategy::kApply},
                                            {"Preview", Strategy::kPreview}};
constexpr Choice<EvictMode> kEvictModes[] = {
    {"dry-run", EvictMode::kDryRun}, {"api", EvictMode::kApi}, {"cri", EvictMode::kCri}};

template <typename E, size_t N>
Status GetChoice(const Json& object, std::string_view path, const char* key,
                 const Choice<E> (&choices)[N], E& out) {
  const Json* v = Find(object, key);
  if (v == nullptr) return Status::Ok();
  for (size_t i = 0; v->IsString() && i < N; ++i) {
    if (JsonStringView(*v) == choices[i].text) {
      out = choices[i].value;
      return Status::Ok();
    }
  }
  std::string expected;
  for (size_t i = 0; i < N; ++i) {
    expected += fmt::format("{}\"{}\"", i == 0 ? "" : i + 1 == N ? " or " : ", ", choices[i].text);
  }
  return Invalid(Join(path, key), *v, expected);
}

// "N%" with N all of the text before the "%": from_chars takes no blank, "+" nor hex prefix.
std::optional<double> ParsePercent(std::string_view s) {
  if (s.size() < 2 || s.back() != '%') return std::nullopt;
  const char* end = s.data() + s.size() - 1;
  double x = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), end, x);
  if (ec != std::errc() || ptr != end || !std::isfinite(x)) return std::nullopt;
  return x;
}

// A watermark must be above 0 (a watermark of 0 would always breach); a margin may be 0.
StatusOr<Level> ParseLevel(const Json& v, std::string_view path, bool is_margin) {
  if (v.IsNumber()) {
    const double x = v.GetDouble();
    if (x < 0 || (x == 0 && !is_margin)) {
      return Invalid(path, v, is_margin ? "a number >= 0" : "a number above 0");
    }
    return Level{x, false};
  }
  const std::optional<double> percent =
      v.IsString() ? ParsePercent(JsonStringView(v)) : std::nullopt;
  if (!percent) return Invalid(path, v, "a number, or a number followed by \"%\"");
  const bool in_range =
      is_margin ? *percent >= 0 && *percent < 100 : *percent > 0 && *percent <= 100;
  if (!in_range) {
    return Invalid(
        path, v,
        is_margin ? "a percent from 0% to below 100%" : "a percent above 0% and at most 100%");
  }
  return Level{*percent, true};
}

std::string LevelText(const Level& level) {
  return level.percent ? fmt::format("\"{}%\"", level.value) : fmt::format("{}", level.value);
}

std::string RegisteredMetrics() {
  std::string names;
  for (const GuardMetric& m : Metrics())
    names += fmt::format("{}{}", names.empty() ? "" : ", ", m.name);
  return fmt::format("a registered metric: {}", names);
}

// Sets the ensurance's metric and watermark; gives the metric's attributes.
StatusOr<const GuardMetric*> ParseMetricRule(const Json& entry, std::string_view entry_path,
                                             ObjectiveEnsurance& e) {
  const std::string path = Join(entry_path, "metricRule");
  constexpr std::string_view kExpected = "an object with \"name\" and \"value\"";
  const Json* rule = Find(entry, "metricRule");
  if (rule == nullptr) return Missing(path, kExpected);
  if (!rule->IsObject()) return Invalid(path, *rule, kExpected);
  QRM_RETURN_IF_ERROR(CheckKeys(*rule, path, {"name", "value"}));
  const Json* name = Find(*rule, "name");
  if (name == nullptr) return Missing(Join(path, "name"), RegisteredMetrics());
  const GuardMetric* metric = name->IsString() ? FindMetric(JsonStringView(*name)) : nullptr;
  if (metric == nullptr) return Invalid(Join(path, "name"), *name, RegisteredMetrics());
  e.metric = std::string(metric->name);
  const Json* value = Find(*rule, "value");
  if (value == nullptr)
    return Missing(Join(path, "value"), "a number, or a number followed by \"%\"");
  QRM_ASSIGN_OR_RETURN(e.watermark, ParseLevel(*value, Join(path, "value"), false));
  return metric;
}

Status ParseAction(const Json& entry, std::string_view path, const GuardMetric& metric,
                   GuardAction& out) {
  // A metric without a quota to lower (memory) would never see its gap close by throttling.
  out = metric.throttleable ? GuardAction::kThrottle : GuardAction::kEvict;
  QRM_RETURN_IF_ERROR(GetChoice(entry, path, "actionName", kActions, out));
  if (out != GuardAction::kEvict && !metric.throttleable) {
    return Invalid(Join(path, "actionName"), *Find(entry, "actionName"),
                   fmt::format("{} cannot be throttled: use \"evict\"", metric.name));
  }
  return Status::Ok();
}

Status ParseMargin(const Json& entry, std::string_view entry_path, ObjectiveEnsurance& e) {
  const Json* margin = Find(entry, "restoreMargin");
  if (margin == nullptr) return Status::Ok();
  const std::string path = Join(entry_path, "restoreMargin");
  QRM_ASSIGN_OR_RETURN(e.restore_margin, ParseLevel(*margin, path, true));
  // Levels of different kinds compare only against the node's capacity, known when applied.
  if (e.restore_margin.percent == e.watermark.percent &&
      e.restore_margin.value >= e.watermark.value) {
    return Invalid(path, *margin, fmt::format("below the watermark {}", LevelText(e.watermark)));
  }
  return Status::Ok();
}

StatusOr<ObjectiveEnsurance> ParseEnsurance(const Json& entry, std::string_view path) {
  if (!entry.IsObject()) return Invalid(path, entry, "an object");
  QRM_RETURN_IF_ERROR(CheckKeys(entry, path,
                                {"name", "metricRule", "actionName", "strategy",
                                 "avoidanceThreshold", "restoreThreshold", "restoreMargin"}));
  ObjectiveEnsurance e;
  const Json* name = Find(entry, "name");
  if (name == nullptr) return Missing(Join(path, "name"), "a non-empty string");
  if (!name->IsString() || name->GetStringLength() == 0) {
    return Invalid(Join(path, "name"), *name, "a non-empty string");
  }
  e.name = JsonString(*name);
  QRM_ASSIGN_OR_RETURN(const GuardMetric* metric, ParseMetricRule(entry, path, e));
  QRM_RETURN_IF_ERROR(ParseAction(entry, path, *metric, e.action));
  QRM_RETURN_IF_ERROR(GetChoice(entry, path, "strategy", kStrategies, e.strategy));
  QRM_RETURN_IF_ERROR(GetInt(entry, path, "avoidanceThreshold", 1, 1000, e.avoidance_threshold));
  QRM_RETURN_IF_ERROR(GetInt(entry, path, "restoreThreshold", 1, 1000, e.restore_threshold));
  QRM_RETURN_IF_ERROR(ParseMargin(entry, path, e));
  return e;
}

Status ParseEnsurances(const Json& doc, std::vector<ObjectiveEnsurance>& out) {
  constexpr std::string_view kExpected = "an array of at least one ensurance";
  const Json* list = Find(doc, "objectiveEnsurances");
  if (list == nullptr) return Missing("objectiveEnsurances", kExpected);
  if (!list->IsArray() || list->Empty()) return Invalid("objectiveEnsurances", *list, kExpected);
  std::map<std::string, rapidjson::SizeType> index_of_name;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const std::string path = fmt::format("objectiveEnsurances[{}]", i);
    QRM_ASSIGN_OR_RETURN(ObjectiveEnsurance e, ParseEnsurance((*list)[i], path));
    // Names are how logs, metrics and the guard's state tell ensurances apart.
    const auto [it, inserted] = index_of_name.emplace(e.name, i);
    if (!inserted) {
      return Invalid(Join(path, "name"), (*list)[i]["name"],
                     fmt::format("already the name of objectiveEnsurances[{}]", it->second));
    }
    out.push_back(std::move(e));
  }
  return Status::Ok();
}

Status ParseThrottle(const Json& doc, ThrottleOptions& out) {
  QRM_ASSIGN_OR_RETURN(
      const Json* t, GetSection(doc, "throttle", {"stepCPURatio", "minCPURatio", "belowRequest"}));
  if (t == nullptr) return Status::Ok();
  QRM_RETURN_IF_ERROR(GetPercentShare(*t, "throttle", "stepCPURatio", false, out.step_ratio));
  QRM_RETURN_IF_ERROR(GetPercentShare(*t, "throttle", "minCPURatio", true, out.min_cpu_ratio));
  return GetBool(*t, "throttle", "belowRequest", out.below_request);
}

Status ParseEviction(const Json& doc, EvictionOptions& out) {
  QRM_ASSIGN_OR_RETURN(const Json* e, GetSection(doc, "eviction",
                                                 {"mode", "coolDownSeconds", "maxPodsPerRound",
                                                  "terminationGracePeriodSeconds"}));
  if (e == nullptr) return Status::Ok();
  QRM_RETURN_IF_ERROR(GetChoice(*e, "eviction", "mode", kEvictModes, out.mode));
  QRM_RETURN_IF_ERROR(GetInt(*e, "eviction", "coolDownSeconds", 0, 86400, out.cool_down_s));
  QRM_RETURN_IF_ERROR(GetInt(*e, "eviction", "maxPodsPerRound", 1, 1000, out.max_pods_per_round));
  return GetInt(*e, "eviction", "terminationGracePeriodSeconds", 0, 3600, out.grace_period_s);
}

// "namespace/name" or "namespace/*". A "*" anywhere else ("web-*", "*/db") would look like a
// pattern yet match nothing, leaving the pods the operator meant to protect unprotected.
bool ValidSkipEntry(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size()) return false;
  const std::string_view ns = s.substr(0, slash), name = s.substr(slash + 1);
  if (name.find('/') != std::string_view::npos) return false;
  if (ns.find('*') != std::string_view::npos) return false;
  if (name != "*" && name.find('*') != std::string_view::npos) return false;
  for (const char c : s) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '\x7f') return false;  // blank or control
  }
  return true;
}

Status ParseCandidates(const Json& doc, CandidateOptions& out) {
  QRM_ASSIGN_OR_RETURN(const Json* c, GetSection(doc, "candidates", {"sharedCores", "skip"}));
  if (c == nullptr) return Status::Ok();
  QRM_RETURN_IF_ERROR(GetBool(*c, "candidates", "sharedCores", out.shared_cores));
  const Json* skip = Find(*c, "skip");
  if (skip == nullptr) return Status::Ok();
  if (!skip->IsArray()) return Invalid("candidates.skip", *skip, "an array of strings");
  for (rapidjson::SizeType i = 0; i < skip->Size(); ++i) {
    const Json& entry = (*skip)[i];
    if (!entry.IsString() || !ValidSkipEntry(JsonStringView(entry))) {
      return Invalid(fmt::format("candidates.skip[{}]", i), entry,
                     "\"namespace/name\" or \"namespace/*\"");
    }
    out.skip.push_back(JsonString(entry));
  }
  return Status::Ok();
}

}  // namespace

bool CandidateOptions::Skipped(std::string_view pod_namespace, std::string_view pod_name) const {
  for (const std::string& s : skip) {
    const std::string_view entry = s;
    if (entry.size() <= pod_namespace.size() || !entry.starts_with(pod_namespace) ||
        entry[pod_namespace.size()] != '/') {
      continue;
    }
    const std::string_view name = entry.substr(pod_namespace.size() + 1);
    if (name == "*" || name == pod_name) return true;
  }
  return false;
}

StatusOr<GuardPolicy> ParseGuardPolicy(std::string_view json) {
  rapidjson::Document doc;
  // Iterative: no nesting exhausts the stack. Valid UTF-8 only: what a message quotes is what
  // the operator wrote. Not kParseFullPrecisionFlag: RapidJSON 1.1 passes 0 to clz on "0e99".
  doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(json.data(),
                                                                                    json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(fmt::format("guard policy: not a JSON object (offset {}: {})",
                                            doc.GetErrorOffset(),
                                            rapidjson::GetParseError_En(doc.GetParseError())));
  }
  if (!doc.IsObject()) {
    return InvalidArgumentError(
        fmt::format("guard policy: not a JSON object (found {})", Text(doc)));
  }
  QRM_RETURN_IF_ERROR(
      CheckKeys(doc, "", {"objectiveEnsurances", "throttle", "eviction", "candidates"}));
  GuardPolicy policy;
  QRM_RETURN_IF_ERROR(ParseEnsurances(doc, policy.ensurances));
  QRM_RETURN_IF_ERROR(ParseThrottle(doc, policy.throttle));
  QRM_RETURN_IF_ERROR(ParseEviction(doc, policy.eviction));
  QRM_RETURN_IF_ERROR(ParseCandidates(doc, policy.candidates));
  return policy;
}

}  // namespace qrm::advisor::guard
