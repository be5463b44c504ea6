#include "cluster/loadaware/config.h"

#include <string>
#include <utility>
#include <vector>

namespace qrm::cluster::loadaware {
namespace {

std::optional<ResourceVector> ScoreWeights(const LoadAwareArgs& args, const Vectorizer& v) {
  ResourceVector weights = v.ToFactorVec(args.resource_weights);
  if (args.dominant_resource_weight == 0 && IsEmpty(weights)) return std::nullopt;
  return weights;
}

}  // namespace

Vectorizer VectorizerFromArgs(const LoadAwareArgs& args) {
  std::vector<std::string> names = {std::string(kCpu), std::string(kMemory)};
  const auto add_keys = [&](const ResourceFactors& m) {
    for (const auto& [name, value] : m) names.push_back(name);
  };
  add_keys(args.usage_thresholds);
  add_keys(args.prod_usage_thresholds);
  if (args.aggregated) add_keys(args.aggregated->usage_thresholds);
  add_keys(args.resource_weights);
  add_keys(args.estimated_scaling_factors);
  names.insert(names.end(), args.supported_resources.begin(), args.supported_resources.end());
  return Vectorizer(std::move(names));
}

Config::Config(LoadAwareArgs args)
    : args_(std::move(args)),
      vectorizer_(VectorizerFromArgs(args_)),
      profile_(ArgsFilterProfile(args_, vectorizer_)),
      score_weights_(ScoreWeights(args_, vectorizer_)),
      estimator_(args_, vectorizer_) {}

StatusOr<std::unique_ptr<const Config>> Config::Create(LoadAwareArgs args) {
  if (Status s = Validate(args); !s.ok()) return s;
  return std::unique_ptr<const Config>(new Config(std::move(args)));
}

}  // namespace qrm::cluster::loadaware
