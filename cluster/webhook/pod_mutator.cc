#include "cluster/webhook/pod_mutator.h"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/webhook/pod_view.h"
#include "cluster/webhook/qos_derivation.h"
#include "common/json_string.h"
#include "common/protocol_keys.h"
#include "common/quote.h"

namespace qrm::webhook {
namespace {

using Value = rapidjson::Value;

// Numbers stay exact in a double up to 2^53; larger or fractional amounts are written as
// quantity strings, which the CRI shim reads as well.
constexpr int64_t kExactInDouble = int64_t{1} << 53;

std::string QuantityJson(const Quantity& q) {
  const int64_t value = q.Value();
  if (q.MilliValue() == value * 1000 && value >= 0 && value <= kExactInDouble) {
    return std::to_string(value);
  }
  return JsonStringValue(q.ToString());
}

// One entry of a hand-written qrm.io/resources object, as a quantity.
StatusOr<Quantity> EntryQuantity(const Value& v) {
  if (v.IsString()) return Quantity::Parse(JsonStringView(v));
  if (v.IsNumber()) return Quantity::Parse(JsonText(v));
  return InvalidArgumentError("not a number or a quantity string");
}

// The annotation the CRI shim would apply to a container: qrm.io/resources.<name>, else the
// pod-wide qrm.io/resources (first match wins; docs/cri-shim.md).
struct Existing {
  std::string key;
  std::string value;
};
std::optional<Existing> ExistingResources(const PodView& pod, const std::string& container) {
  const std::string own = std::string(kResourcesAnnotation) + "." + container;
  if (auto it = pod.annotations.find(own); it != pod.annotations.end()) {
    return Existing{own, it->second};
  }
  if (auto it = pod.annotations.find(kResourcesAnnotation); it != pod.annotations.end()) {
    return Existing{kResourcesAnnotation, it->second};
  }
  return std::nullopt;
}

// The plugin resources a container's limits ask.
std::map<std::string, Quantity> PluginLimits(const WebhookConfig& config, const ContainerView& c) {
  std::map<std::string, Quantity> out;
  for (const auto& [name, q] : c.limits) {
    if (IsPluginResource(config, name)) out.emplace(name, q);
  }
  return out;
}

// The JSON object text of `asked`, after the members of `existing` when there is one.
std::string MergedObject(const Value* existing, const std::map<std::string, Quantity>& asked) {
  std::string out = "{";
  auto append = [&](std::string_view name, const std::string& value_json) {
    if (out.size() > 1) out += ',';
    out += JsonStringValue(name) + ":" + value_json;
  };
  if (existing != nullptr) {
    for (const auto& m : existing->GetObject()) append(JsonStringView(m.name), JsonText(m.value));
  }
  for (const auto& [name, q] : asked) {
    if (existing == nullptr || !existing->HasMember(name.c_str())) append(name, QuantityJson(q));
  }
  return out + "}";
}

class Mutator {
 public:
  Mutator(const WebhookConfig& config, const PodView& pod) : config_(config), pod_(pod) {}

  PodMutation Run() {
    for (const ContainerView& c : pod_.containers) {
      Resources(c);
      if (out_.refusal) break;
    }
    if (!out_.refusal) Qos();
    if (out_.refusal) {
      out_.patch.clear();
      out_.written.clear();
      return std::move(out_);
    }
    if (!out_.patch.empty() && !pod_.has_annotations) {
      out_.patch.insert(out_.patch.begin(), PatchOp{"add", "/metadata/annotations", "{}"});
    }
    return std::move(out_);
  }

 private:
  void Refuse(std::string why) { out_.refusal = std::move(why); }

  void Write(const std::string& op, const std::string& key, const std::string& value) {
    out_.patch.push_back(PatchOp{op, AnnotationPath(key), JsonStringValue(value)});
    out_.written.push_back(key);
  }

  void Resources(const ContainerView& c) {
    const auto asked = PluginLimits(config_, c);
    if (asked.empty()) return;
    const std::string own = std::string(kResourcesAnnotation) + "." + c.name;
    const auto existing = ExistingResources(pod_, c.name);
    if (!existing) return Write("add", own, MergedObject(nullptr, asked));
    rapidjson::Document doc;
    doc.Parse(existing->value.data(), existing->value.size());
    if (doc.HasParseError() || !doc.IsObject()) {
      return Refuse(
          fmt::format("pod annotation {}={} is not a JSON object of resource name -> "
                      "quantity, so container {} limits cannot be checked against it",
                      existing->key, Quote(existing->value), Quote(c.name)));
    }
    if (!Agrees(*existing, doc, c, asked) || AllPresent(doc, asked)) return;
    // Entries the annotation lacks are added to the container's own annotation; one made from
    // the pod-wide annotation keeps its entries, since the shim applies only the first found.
    Write(existing->key == own ? "replace" : "add", own, MergedObject(&doc, asked));
  }

  static bool AllPresent(const Value& doc, const std::map<std::string, Quantity>& asked) {
    for (const auto& [name, q] : asked) {
      if (!doc.HasMember(name.c_str())) return false;
    }
    return true;
  }

  // Refuses (and returns false) when an entry of the annotation differs from the limits.
  bool Agrees(const Existing& existing, const Value& doc, const ContainerView& c,
              const std::map<std::string, Quantity>& asked) {
    for (const auto& [name, limit] : asked) {
      const auto it = doc.FindMember(name.c_str());
      if (it == doc.MemberEnd()) continue;
      auto written = EntryQuantity(it->value);
      if (written.ok() && *written == limit) continue;
      Refuse(fmt::format(
          "pod annotation {} says {}: {} but container {} limits {}: {}; remove "
          "the annotation or make the two agree",
          existing.key, Quote(name), JsonText(it->value), Quote(c.name), name, limit.ToString()));
      return false;
    }
    return true;
  }

  std::optional<std::string> Role() const {
    if (auto it = pod_.labels.find(std::string(kPodRoleLabelKey)); it != pod_.labels.end()) {
      return fmt::format("label {}={}", kPodRoleLabelKey, Quote(it->second));
    }
    if (auto it = pod_.annotations.find(std::string(kPodRoleKey)); it != pod_.annotations.end()) {
      return fmt::format("annotation {}={}", kPodRoleKey, Quote(it->second));
    }
    return std::nullopt;
  }

  void Qos() {
    QosDerivation d = DeriveQos(config_, pod_);
    for (auto& w : d.warnings) out_.warnings.push_back(std::move(w));
    if (!d.level) return;
    const std::string key(kQosLevelKey);
    if (auto it = pod_.annotations.find(key); it != pod_.annotations.end()) {
      // A hand-written level overrides a default, never a requirement.
      if (d.required && it->second != *d.level) {
        Refuse(
            fmt::format("pod annotation {}={} contradicts the pod's resources: {}, which only "
                        "{} may use",
                        key, Quote(it->second), d.reason, *d.level));
      }
      return;
    }
    if (auto role = Role()) {
      // The role table (which the webhook does not read) decides the level of a pod with a role.
      out_.warnings.push_back(
          fmt::format("{} not written: the pod's {} decides its level ({} "
                      "suggests {})",
                      key, *role, d.reason, *d.level));
      return;
    }
    Write("add", key, *d.level);
  }

  const WebhookConfig& config_;
  const PodView& pod_;
  PodMutation out_;
};

}  // namespace

StatusOr<PodMutation> MutatePod(const WebhookConfig& config, std::string_view pod_json) {
  QRM_ASSIGN_OR_RETURN(const PodView pod, ReadPod(pod_json));
  return Mutator(config, pod).Run();
}

}  // namespace qrm::webhook
