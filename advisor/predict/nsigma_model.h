// The N-sigma models of the node prediction design (Koordinator's document; shipped by no
// anchor): the predicted peak is mean + N * stdev of the usage, with decayed statistics.
//
//   v1: of the node's protected usage.
//   v2: max(v1, sum over Prod pods of (mean + N * stdev) + the same for system usage),
//       system usage being the document's special pod S.
#pragma once

#include <map>
#include <set>
#include <string>

#include "advisor/predict/decayed_moments.h"
#include "advisor/predict/model_state.h"
#include "advisor/predict/peak_model.h"

namespace qrm::advisor {

struct NSigmaOptions {
  double n = 3;
  double half_life_s = 12 * 3600.0;
  int64_t gc_after_s = 30 * 60;
};

class NSigmaModel : public PeakModel {
 public:
  NSigmaModel(const NSigmaOptions& options, bool per_pod);  // per_pod: v2
  std::string_view name() const override { return per_pod_ ? "nsigma-v2" : "nsigma-v1"; }
  void Observe(const Observation& step) override;
  Prediction Predict(int64_t now) const override;
  Status SaveState(rapidjson::Value& out, JsonAllocator& a) const override;
  Status RestoreState(const rapidjson::Value& state) override;
  void RetainPods(const std::set<std::string>& uids) override;

 private:
  struct PodModel {
    DecayedMoments moments;
    int64_t last_seen = 0;
  };
  Status RestorePod(const std::string& uid, const StateReader& in);
  double Sigma(const DecayedMoments& m) const { return m.Mean() + options_.n * m.Stdev(); }

  NSigmaOptions options_;
  bool per_pod_;
  DecayedMoments node_;
  DecayedMoments system_;
  std::map<std::string, PodModel> pods_;
  double capacity_ = 0;
  int64_t last_step_ = 0;
};

}  // namespace qrm::advisor
