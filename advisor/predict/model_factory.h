// Builds models by name, so that configs and the replay tool can select them:
//
//   koordinator | nsigma-v1 | nsigma-v2 | borg-default | resource-central | adaptive
//   max:<name>+<name>[+...]          e.g. max:borg-default+resource-central
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "advisor/predict/adaptive_model.h"
#include "advisor/predict/koordinator_model.h"
#include "advisor/predict/nsigma_model.h"
#include "advisor/predict/peak_model.h"
#include "advisor/predict/simple_models.h"

namespace qrm::advisor {

// Every model's options; ForResource gives each model's defaults for a resource.
struct ModelOptions {
  KoordinatorOptions koordinator;
  NSigmaOptions nsigma;
  double borg_overcommit = 1.1;
  ResourceCentralOptions resource_central;
  AdaptiveOptions adaptive;

  static ModelOptions ForResource(Resource resource);
  // For usage in percent of the machine (the Alibaba layouts): the histograms span 0.025 to
  // 1024 (Koordinator's CPU buckets) for both resources; the percentiles and half-lives stay
  // the resource's. Koordinator's memory buckets start at 5 MiB and would put every percent
  // value in bucket 0.
  static ModelOptions ForPercent(Resource resource);
  Status Validate() const;
};

// The names of the single models, in the order the replay prints them.
const std::vector<std::string>& ModelNames();

// kInvalidArgument naming the spec for an unknown name or a malformed max: spec.
StatusOr<std::unique_ptr<PeakModel>> MakeModel(std::string_view spec, const ModelOptions& options);

}  // namespace qrm::advisor
