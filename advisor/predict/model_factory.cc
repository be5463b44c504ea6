#include "advisor/predict/model_factory.h"

#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace qrm::advisor {

ModelOptions ModelOptions::ForResource(Resource resource) {
  ModelOptions o;
  o.koordinator = KoordinatorOptions::For(resource);
  o.nsigma.half_life_s = o.koordinator.histogram.half_life_s;
  o.resource_central.histogram = o.koordinator.histogram;
  o.resource_central.percentile = o.koordinator.percentile;
  return o;
}

ModelOptions ModelOptions::ForPercent(Resource resource) {
  ModelOptions o = ForResource(resource);
  const HistogramOptions cpu = KoordinatorOptions::For(Resource::kCpu).histogram;
  o.koordinator.histogram.first_bucket = cpu.first_bucket;
  o.koordinator.histogram.max_value = cpu.max_value;
  o.resource_central.histogram = o.koordinator.histogram;
  return o;
}

Status ModelOptions::Validate() const {
  QRM_RETURN_IF_ERROR(koordinator.histogram.Validate().WithContext("koordinator"));
  QRM_RETURN_IF_ERROR(resource_central.histogram.Validate().WithContext("resource-central"));
  QRM_RETURN_IF_ERROR(adaptive.Validate().WithContext("adaptive"));
  auto in_unit = [](const char* field, double v) {
    return v > 0 && v <= 1
               ? Status::Ok()
               : InvalidArgumentError(fmt::format("{}: invalid value {} (0 < p <= 1)", field, v));
  };
  QRM_RETURN_IF_ERROR(in_unit("koordinator.percentile", koordinator.percentile));
  QRM_RETURN_IF_ERROR(in_unit("resource-central.percentile", resource_central.percentile));
  if (!(koordinator.margin >= 1)) {
    return InvalidArgumentError(
        fmt::format("koordinator.margin: invalid value {} (>= 1)", koordinator.margin));
  }
  if (!(nsigma.n >= 0) || !std::isfinite(nsigma.n)) {
    return InvalidArgumentError(fmt::format("nsigma.n: invalid value {} (>= 0)", nsigma.n));
  }
  if (!(nsigma.half_life_s > 0) || !(nsigma.half_life_s <= 1e12)) {
    return InvalidArgumentError(fmt::format(
        "nsigma.half_life: invalid value {} s (> 0 s and <= 1e12 s)", nsigma.half_life_s));
  }
  for (const auto& [field, value] :
       {std::pair{"koordinator.cold_start", koordinator.cold_start_s},
        std::pair{"koordinator.gc_after", koordinator.gc_after_s},
        std::pair{"nsigma.gc_after", nsigma.gc_after_s},
        std::pair{"resource-central.gc_after", resource_central.gc_after_s}}) {
    if (value < 0) {
      return InvalidArgumentError(fmt::format("{}: invalid value {} s (>= 0 s)", field, value));
    }
  }
  if (!(borg_overcommit >= 1)) {
    return InvalidArgumentError(
        fmt::format("borg-default.overcommit: invalid value {} (>= 1)", borg_overcommit));
  }
  return Status::Ok();
}

const std::vector<std::string>& ModelNames() {
  static const std::vector<std::string> names = {"koordinator",  "nsigma-v1",        "nsigma-v2",
                                                 "borg-default", "resource-central", "adaptive"};
  return names;
}

namespace {

std::unique_ptr<PeakModel> NewSingle(std::string_view name, const ModelOptions& o) {
  if (name == "koordinator") return std::make_unique<KoordinatorModel>(o.koordinator);
  if (name == "nsigma-v1") return std::make_unique<NSigmaModel>(o.nsigma, false);
  if (name == "nsigma-v2") return std::make_unique<NSigmaModel>(o.nsigma, true);
  if (name == "borg-default") return std::make_unique<BorgDefaultModel>(o.borg_overcommit);
  if (name == "resource-central") return std::make_unique<ResourceCentralModel>(o.resource_central);
  if (name == "adaptive") return std::make_unique<AdaptiveModel>(o.adaptive);
  return nullptr;
}

StatusOr<std::unique_ptr<PeakModel>> MakeSingle(std::string_view name, const ModelOptions& o) {
  std::unique_ptr<PeakModel> model = NewSingle(name, o);
  if (model != nullptr) return model;
  return InvalidArgumentError(fmt::format("model: unknown model \"{}\" ({}, or max:a+b)", name,
                                          fmt::join(ModelNames(), ", ")));
}

}  // namespace

StatusOr<std::unique_ptr<PeakModel>> MakeModel(std::string_view spec, const ModelOptions& o) {
  QRM_RETURN_IF_ERROR(o.Validate());
  if (!spec.starts_with("max:")) return MakeSingle(spec, o);
  std::vector<std::unique_ptr<PeakModel>> parts;
  std::string_view rest = spec.substr(4);
  if (rest.ends_with('+')) rest = "+";  // an empty last part: refused below
  while (!rest.empty()) {
    const size_t plus = rest.find('+');
    const std::string_view part = rest.substr(0, plus);
    if (part.empty() || part.starts_with("max:")) {
      return InvalidArgumentError(fmt::format(
          "model: invalid value \"{}\" (max: takes two or more single models joined by '+')",
          spec));
    }
    QRM_ASSIGN_OR_RETURN(std::unique_ptr<PeakModel> m, MakeSingle(part, o));
    parts.push_back(std::move(m));
    rest = plus == std::string_view::npos ? std::string_view() : rest.substr(plus + 1);
  }
  if (parts.size() < 2) {
    return InvalidArgumentError(fmt::format(
        "model: invalid value \"{}\" (max: takes two or more single models joined by '+')", spec));
  }
  return std::unique_ptr<PeakModel>(
      std::make_unique<MaxModel>(std::string(spec), std::move(parts)));
}

}  // namespace qrm::advisor
