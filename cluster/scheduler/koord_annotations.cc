#include "cluster/scheduler/koord_annotations.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "cluster/extender/go_json_reader.h"
#include "cluster/objects/meta_time.h"
#include "cluster/scheduler/inputs.h"
#include "common/protocol_keys.h"

namespace qrm::cluster::scheduler {
namespace {

using extender::GoDecoder;
using extender::JsonDocument;
using extender::JsonPath;
using extender::JsonValue;

using Factors = std::map<std::string, int64_t>;

Status ReadFactors(const GoDecoder& d, const JsonValue& v, const JsonPath& path, Factors& out) {
  return d.ReadMap(v, path, out, [&](int64_t& value, const JsonValue& e, const JsonPath& p) {
    return d.ReadInt64(e, p, value);
  });
}

// metav1.Duration: a string time.ParseDuration reads, kept in whole seconds (the unit of the
// decision core; Koordinator's durations are minutes and hours).
Status ReadDuration(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                    std::optional<std::chrono::seconds>& out) {
  if (v.IsNull()) {
    out.reset();
    return Status::Ok();
  }
  std::string text;
  QRM_RETURN_IF_ERROR(d.ReadString(v, path, text));
  StatusOr<int64_t> ns = ParseDuration(text);
  if (!ns.ok()) return d.Error(path, ns.status().message());
  out = std::chrono::seconds(*ns / kNanosPerSecond);
  return Status::Ok();
}

Status ReadAggregated(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                      std::optional<loadaware::CustomAggregatedUsage>& out) {
  if (v.IsNull()) {
    out.reset();
    return Status::Ok();
  }
  if (!v.IsObject()) return d.TypeError(path, v, "an object");
  if (!out) out.emplace();
  loadaware::CustomAggregatedUsage& agg = *out;
  return d.ReadStruct(v, path,
                      {"usageThresholds", "usageAggregationType", "usageAggregatedDuration"},
                      [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                        if (field == 0) return ReadFactors(d, fv, fp, agg.usage_thresholds);
                        if (field == 1) return d.ReadString(fv, fp, agg.usage_aggregation_type);
                        return ReadDuration(d, fv, fp, agg.usage_aggregated_duration);
                      });
}

// Parses `text` and, unless it is null, reads it into a T with `read`.
template <typename T, typename Read>
StatusOr<std::optional<T>> ParseJson(std::string_view text, std::string_view key, Read&& read) {
  JsonDocument doc;
  if (Status s = doc.Parse(text); !s.ok()) {
    return InvalidArgumentError(fmt::format("annotation {}: {}", key, s.message()));
  }
  if (doc.root().IsNull()) return std::optional<T>();
  const std::string type = fmt::format("annotation {}", key);
  const GoDecoder d(doc, type);
  T value{};
  if (Status s = read(d, doc.root(), JsonPath(), value); !s.ok()) return s;
  return std::optional<T>(std::move(value));
}

}  // namespace

StatusOr<std::optional<Factors>> ParseScalingFactors(std::string_view text) {
  return ParseJson<Factors>(text, kKoordScalingFactorsAnnotation, ReadFactors);
}

StatusOr<std::optional<loadaware::ResourceList>> ParseRawAllocatable(std::string_view text) {
  StatusOr<std::optional<std::map<std::string, Quantity>>> list =
      ParseJson<std::map<std::string, Quantity>>(
          text, kKoordRawAllocatableAnnotation,
          [](const GoDecoder& d, const JsonValue& v, const JsonPath& p,
             std::map<std::string, Quantity>& out) { return d.ReadQuantityMap(v, p, out); });
  if (!list.ok()) return list.status();
  if (!*list) return std::optional<loadaware::ResourceList>();
  return std::optional<loadaware::ResourceList>(ToLoadAwareList(**list));
}

StatusOr<std::optional<loadaware::CustomUsageThresholds>> ParseUsageThresholds(
    std::string_view text) {
  return ParseJson<loadaware::CustomUsageThresholds>(
      text, kKoordUsageThresholdsAnnotation,
      [](const GoDecoder& d, const JsonValue& v, const JsonPath& path,
         loadaware::CustomUsageThresholds& out) {
        return d.ReadStruct(v, path, {"usageThresholds", "prodUsageThresholds", "aggregatedUsage"},
                            [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                              if (field == 0) return ReadFactors(d, fv, fp, out.usage_thresholds);
                              if (field == 1) {
                                return ReadFactors(d, fv, fp, out.prod_usage_thresholds);
                              }
                              return ReadAggregated(d, fv, fp, out.aggregated_usage);
                            });
      });
}

}  // namespace qrm::cluster::scheduler
