// The plugin's arguments and what New() derives from them once (load_aware.go): the resource
// vectorizer, the arguments' filter profile, the score weights and the estimator.
#pragma once

#include <memory>
#include <optional>

#include "cluster/loadaware/args.h"
#include "cluster/loadaware/estimator.h"
#include "cluster/loadaware/profile.h"
#include "cluster/loadaware/resource_vector.h"
#include "common/status.h"

namespace qrm::cluster::loadaware {

class Config {
 public:
  // Validates `args` (Validate); they are used as given, so defaults must already be set
  // (SetDefaults) when the arguments come from a scheduler configuration.
  static StatusOr<std::unique_ptr<const Config>> Create(LoadAwareArgs args);

  Config(const Config&) = delete;
  Config& operator=(const Config&) = delete;

  const LoadAwareArgs& args() const { return args_; }
  const Vectorizer& vectorizer() const { return vectorizer_; }
  const FilterProfile& profile() const { return profile_; }
  // nullopt: scoring is off (dominantResourceWeight 0 and no resource weighted), every node 0.
  const std::optional<ResourceVector>& score_weights() const { return score_weights_; }
  const Estimator& estimator() const { return estimator_; }

 private:
  explicit Config(LoadAwareArgs args);

  const LoadAwareArgs args_;
  const Vectorizer vectorizer_;
  const FilterProfile profile_;
  const std::optional<ResourceVector> score_weights_;
  const Estimator estimator_;
};

// NewResourceVectorizerFromArgs: cpu, memory, and every name the arguments mention.
Vectorizer VectorizerFromArgs(const LoadAwareArgs& args);

}  // namespace qrm::cluster::loadaware
