// Koordinator's shipped node predictor (koordlet prediction, as of koordinator a7a1b76; facts
// in docs/advisor.md): decayed histograms per Prod pod, for the Prod class and for system
// usage, one sample per step (a minute) of weight 1.
//
//   pod predictor:      peak = sum over Prod pods of margin * p(pod), a pod younger than
//                       the cold start counting its request instead
//   priority predictor: peak = margin * (p(system) + p(Prod class))
//   combined (min predictor): the larger peak (the smaller reclaimable)
//
// p is the 95th percentile for CPU and the 98th for memory; margin 1.1; cold start 24 h.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "advisor/predict/decayed_histogram.h"
#include "advisor/predict/model_state.h"
#include "advisor/predict/peak_model.h"

namespace qrm::advisor {

struct KoordinatorOptions {
  HistogramOptions histogram;
  double percentile = 0.95;
  double margin = 1.1;
  int64_t cold_start_s = 24 * 3600;
  int64_t gc_after_s = 30 * 60;  // a pod's model is dropped this long after its last step

  // Koordinator's defaults for `resource` (CPU: 25 m first bucket, 1024 cores, 12 h, p95;
  // memory: 5 MiB, 2 TiB, 24 h, p98).
  static KoordinatorOptions For(Resource resource);
};

class KoordinatorModel : public PeakModel {
 public:
  explicit KoordinatorModel(const KoordinatorOptions& options);
  std::string_view name() const override { return "koordinator"; }
  void Observe(const Observation& step) override;
  Prediction Predict(int64_t now) const override;
  Status SaveState(rapidjson::Value& out, JsonAllocator& a) const override;
  Status RestoreState(const rapidjson::Value& state) override;
  void RetainPods(const std::set<std::string>& uids) override;

 private:
  struct PodModel {
    DecayedHistogram histogram;
    double request = 0;
    int64_t started = 0;
    int64_t last_seen = 0;
  };
  rapidjson::Value SavePod(const PodModel& pod, JsonAllocator& a) const;
  Status RestorePod(const std::string& uid, const StateReader& in);

  KoordinatorOptions options_;
  DecayedHistogram system_;
  DecayedHistogram prod_;
  std::map<std::string, PodModel> pods_;
  double capacity_ = 0;
  int64_t last_step_ = 0;  // the time of the latest step: its pods are the node's now
  bool observed_ = false;
};

}  // namespace qrm::advisor
